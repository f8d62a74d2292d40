-- Reachability on Spark, one breadth-first level: the children of the positions first
-- seen at the level before (`frontier`: id) are seen now, at :level, unless seen already.
-- As sql/duckdb/reachable_level.sql, returning the whole state. The frontier meets
-- `children` (each position's list of children, a row a position: children.sql), not
-- every move. Views: reach, frontier, children. Parameter: level.
WITH found AS (
    SELECT DISTINCT dst AS id
    FROM (SELECT explode(c.dsts) AS dst
          FROM frontier AS f
          JOIN children AS c ON c.id = f.id)
)
SELECT r.id,
       r.seen OR c.id IS NOT NULL AS seen,
       CASE WHEN NOT r.seen AND c.id IS NOT NULL THEN :level ELSE r.at END AS at
FROM reach AS r
LEFT JOIN found AS c ON c.id = r.id
