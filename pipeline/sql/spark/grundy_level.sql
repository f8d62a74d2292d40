-- Grundy values on Spark, one level: push the values of the `frontier` (id, grundy:
-- computed on the level before) to their parents; a parent whose last child arrived takes
-- the least value none of its children has (mex), at height :level. As
-- sql/duckdb/grundy_level.sql, returning the whole state. Views: gst, frontier,
-- parents (parents.sql). Parameter: level.
WITH hits AS (
    SELECT src AS id, count(*) AS n, collect_set(grundy) AS got
    FROM (SELECT explode(p.srcs) AS src, f.grundy
          FROM frontier AS f
          JOIN parents AS p ON p.id = f.id)
    GROUP BY src
)
SELECT g.id,
       CASE WHEN h.id IS NULL THEN g.gpending ELSE g.gpending - h.n END AS gpending,
       CASE WHEN h.id IS NULL THEN g.seen ELSE array_union(g.seen, h.got) END AS seen,
       CASE WHEN h.id IS NOT NULL AND g.gpending = h.n
            THEN array_min(array_except(sequence(0, size(array_union(g.seen, h.got))), array_union(g.seen, h.got)))
            ELSE g.grundy END AS grundy,
       CASE WHEN h.id IS NOT NULL AND g.gpending = h.n THEN :level ELSE g.height END AS height
FROM gst AS g
LEFT JOIN hits AS h ON h.id = g.id
