-- Reachability on Spark, one breadth-first level, touching the frontier only: the children
-- of the positions first seen at the level before (`frontier`: id) that no level has seen
-- (`seen`: id, at, the levels' positions so far), each with :level. The frontier meets
-- `children` (each position's list of children, a row a position: children.sql), not
-- every move; nothing is written but the new level (the DuckDB engine's walk,
-- pipeline/engines/arrays.py, finds the same). Views: frontier, children, seen. Parameter: level.
WITH found AS (
    SELECT DISTINCT dst AS id
    FROM (SELECT explode(c.dsts) AS dst
          FROM frontier AS f
          JOIN children AS c ON c.id = f.id)
)
SELECT f.id, CAST(:level AS INT) AS at
FROM found AS f
LEFT ANTI JOIN seen AS s ON s.id = f.id
