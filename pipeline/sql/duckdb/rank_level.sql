-- Solving rank by rank, one rank of an impartial game: the positions with ids lo..hi (one
-- rank; every child of theirs has a lower rank, so is in `children` already) and their
-- moves (rank_moves.sql's moves_here), into the table rank_result, in id order. Variables:
-- lo, hi, child_lo, and pipeline/core/values.py's (band, value_names). Each transition is read
-- once in the whole solve, when its source's rank comes.
-- A position's score comes from its best child's (rank_setup.sql's parent_score); its
-- Grundy value is the smallest value no child has (mex), its height one more than its
-- highest child's. A game that is not impartial has neither: rank_values.sql. Its winning
-- moves are its children lost (those scoring 2B or more), 0 without moves.
CREATE OR REPLACE TEMP TABLE rank_result AS
SELECT id::INTEGER AS id, terminal_score(terminal) AS score, 0 AS grundy, 0 AS height, 0 AS winning_moves
FROM pos
WHERE id BETWEEN getvariable('lo') AND getvariable('hi') AND moves = 0
UNION ALL
SELECT src, parent_score(best), bit_position('0'::BIT, mask) - 1, height + 1, winning
FROM (
    -- the children's rows from child_lo on only: each table of `children` is in id order,
    -- so the rest of it is skipped by its row groups' min/max, not hashed
    SELECT m.src, max(c.score) AS best,
           bitstring_agg(c.grundy, 0, getvariable('width') - 1) AS mask,
           max(c.height) AS height,
           count(*) FILTER (WHERE c.score >= 2 * getvariable('band'))::INTEGER AS winning
    FROM moves_here AS m
    JOIN children AS c ON c.id = m.dst AND c.id >= getvariable('child_lo')
    GROUP BY m.src
)
ORDER BY 1;  -- in id order (ids are numbered rank by rank): the solution needs no sort
