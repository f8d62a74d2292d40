-- Reachability on Spark, one breadth-first level, touching the frontier only: the children
-- of the positions first seen at the level before (`frontier`: id), each once, with
-- :level. The frontier meets `children` (each position's list of children, a row a
-- position: children.sql), not every move. The engine then keeps those no level has seen
-- (pipeline/engines/spark_runs.py: an anti-join with each run of the levels so far) and
-- writes nothing but the new level (the DuckDB engine's walk, pipeline/engines/arrays.py,
-- finds the same). Views: frontier, children. Parameter: level.
SELECT id, CAST(:level AS INT) AS at
FROM (SELECT DISTINCT dst AS id
      FROM (SELECT explode(c.dsts) AS dst
            FROM frontier AS f
            JOIN children AS c ON c.id = f.id))
