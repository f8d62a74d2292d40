-- Reachability on Spark, one breadth-first level: the children of the positions first
-- seen at the level before (`frontier`: id) are seen now, at :level, unless seen already.
-- As sql/duckdb/reachable_level.sql, returning the whole state. Views: reach, frontier,
-- transitions. Parameter: level.
WITH children AS (
    SELECT DISTINCT t.dst AS id
    FROM frontier AS f
    JOIN transitions AS t ON t.src = f.id
)
SELECT r.id,
       r.seen OR c.id IS NOT NULL AS seen,
       CASE WHEN NOT r.seen AND c.id IS NOT NULL THEN :level ELSE r.at END AS at
FROM reach AS r
LEFT JOIN children AS c ON c.id = r.id
