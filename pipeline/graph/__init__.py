"""The move graph as both the stages and the engines make it: positions numbered rank by rank, moves
generated in this process."""
