-- Solving rank by rank, one rank: the positions with ids lo..hi (one rank; every child of
-- theirs has a lower rank, so is in `children` already) and their moves (rank_moves.sql's
-- moves_here), into the table rank_result, in id order. Variables: lo, hi, child_lo,
-- impartial, and pipeline/values.py's (band, value_names). Each transition is read once in
-- the whole solve, when its source's rank comes.
-- A position's best move is to the child with the highest score (rank_setup.sql): a lost
-- child makes it won, one ply after the fastest; else a tied child makes it tied, one ply
-- after the fastest; else (every child won) it is lost, one ply after the slowest. Its
-- Grundy value (impartial games only) is the smallest value no child has (mex), its height
-- one more than its highest child's.
CREATE OR REPLACE TEMP TABLE rank_result AS
SELECT id::INTEGER AS id,
       CASE terminal WHEN getvariable('value_names')[getvariable('win')] THEN 0           -- won in 0
                     WHEN getvariable('value_names')[getvariable('tie')] THEN 2 * getvariable('band') - 1
                     ELSE 3 * getvariable('band') - 1 END AS score,                        -- lost in 0
       CASE WHEN getvariable('impartial') THEN 0 END AS grundy,
       CASE WHEN getvariable('impartial') THEN 0 END AS height
FROM pos
WHERE id BETWEEN getvariable('lo') AND getvariable('hi') AND moves = 0
UNION ALL
SELECT src,
       CASE WHEN best >= 2 * getvariable('band')                       -- a lost child in r:
                 THEN getvariable('band') - best % getvariable('band')  --   won in r + 1
            WHEN best >= getvariable('band') THEN best - 1             -- a tied child: tied in r + 1
            ELSE 3 * getvariable('band') - 2 - best END,               -- all won, at most in r: lost in r + 1
       bit_position('0'::BIT, mask) - 1,
       height + 1
FROM (
    -- the children's rows from child_lo on only: each table of `children` is in id order,
    -- so the rest of it is skipped by its row groups' min/max, not hashed
    SELECT m.src, max(c.score) AS best,
           bitstring_agg(c.grundy, 0, getvariable('width') - 1) AS mask,
           max(c.height) AS height
    FROM moves_here AS m
    JOIN children AS c ON c.id = m.dst AND c.id >= getvariable('child_lo')
    GROUP BY m.src
)
ORDER BY 1;  -- in id order (ids are numbered rank by rank): the solution needs no sort
