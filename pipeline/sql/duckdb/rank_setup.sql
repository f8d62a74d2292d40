-- Solving rank by rank, setup: for rulesets whose game gives a rank that every move
-- lowers (positions.parquet's `rank`, positions numbered rank by rank, transitions sorted
-- by src). Variables: positions, transitions (Parquet paths). Sets variable width: bits of the
-- Grundy-value masks, more than any value can reach (a value never exceeds its moves).
-- A rank's moves are grouped by their source, ids in one rank's range (at most a few
-- million): DuckDB aggregates into an array indexed by the id, no hashing, up to 2^24.
SET perfect_ht_threshold = 24;
SET VARIABLE width = (SELECT max(moves) + 2 FROM read_parquet(getvariable('positions')));

-- The moves and the positions, read from their files a rank at a time: a rank's id range
-- skips the other ranks' row groups by their min/max, so neither is ever held whole. Small
-- files are loaded once instead (rank_load.sql): their ranks share a few row groups of
-- 1 M rows, each read whole per rank.
CREATE TEMP VIEW moves AS
SELECT src, dst FROM read_parquet(getvariable('transitions'));

CREATE TEMP VIEW pos AS
SELECT id, terminal, moves, rank FROM read_parquet(getvariable('positions'));

-- A position's score (see below) where the game is over, and where its best child scores
-- `best` (the highest score among its children): a lost child makes it won, one ply after
-- the fastest; else a tied child makes it tied, one ply after the fastest; else (every
-- child won) it is lost, one ply after the slowest.
CREATE OR REPLACE TEMP MACRO terminal_score(terminal) AS
    CASE terminal WHEN getvariable('value_names')[getvariable('win')] THEN 0            -- won in 0
                  WHEN getvariable('value_names')[getvariable('tie')] THEN 2 * getvariable('band') - 1
                  ELSE 3 * getvariable('band') - 1 END;                                  -- lost in 0
CREATE OR REPLACE TEMP MACRO parent_score(best) AS
    CASE WHEN best >= 2 * getvariable('band')                          -- a lost child in r:
              THEN getvariable('band') - best % getvariable('band')     --   won in r + 1
         WHEN best >= getvariable('band') THEN best - 1                -- a tied child: tied in r + 1
         ELSE 3 * getvariable('band') - 2 - best END;                  -- all won, at most in r: lost in r + 1

-- Each rank's results go to a table of their own (rank_level.sql), kept while a later
-- rank's moves may lead into it: `children` is the union of those a rank needs. score
-- packs value and remoteness so that a parent's best move is the child with the highest
-- score (B = getvariable('band'), pipeline/core/values.py): a child won in r scores r (the
-- parent loses in r + 1 at best), a child tied in r scores B + (B - 1 - r), a child lost
-- in r scores 2B + (B - 1 - r) (the parent wins in r + 1). grundy and height (the longest
-- line of play to a position without moves): NULL unless the game is impartial.
CREATE OR REPLACE TEMP VIEW children AS
SELECT NULL::INTEGER AS id, NULL::INTEGER AS score, NULL::INTEGER AS grundy, NULL::INTEGER AS height
WHERE false;
