-- Solving rank by rank, one rank: the positions with ids lo..hi (one rank; every child of
-- theirs has a lower rank, so is in res already). Variables: transitions (Parquet path),
-- lo, hi. Each transition is read once in the whole solve, when its source's rank comes.
-- A position with a lost child is won, one rank after its fastest lost child; one whose
-- children are all won is lost, after its slowest. Its Grundy value is the smallest value
-- no child has (mex), its height one more than its highest child's.
CREATE OR REPLACE TEMP TABLE moves_here AS
SELECT src::INTEGER AS src, dst::INTEGER AS dst
FROM read_parquet(getvariable('transitions'))
WHERE src BETWEEN getvariable('lo') AND getvariable('hi');

INSERT INTO res
SELECT id, CASE terminal WHEN 'win' THEN 0 ELSE 1048576 END, 0, 0
FROM pos
WHERE id BETWEEN getvariable('lo') AND getvariable('hi') AND moves = 0
UNION ALL
SELECT src,
       CASE WHEN best >= 524288 THEN 1048576 - best + 1  -- a lost child: won in r + 1
            ELSE 1048576 - (best + 1) END,               -- all won: lost in r + 1
       bit_position('0'::BIT, mask) - 1,
       height + 1
FROM (
    SELECT m.src, max(c.score) AS best,
           bitstring_agg(c.grundy, 0, getvariable('width') - 1) AS mask,
           max(c.height) AS height
    FROM moves_here AS m
    JOIN res AS c ON c.id = m.dst
    GROUP BY m.src
)
ORDER BY 1;  -- res stays in id order (ids are numbered rank by rank): the result needs no sort
