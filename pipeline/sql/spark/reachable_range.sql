-- Reachability on Spark, one breadth-first level where the frontier's ids are a narrow
-- range (a game numbered by plies: each level's positions are a few ranks): the children of
-- the positions first seen at the level before (`frontier`: id), each once, with :level,
-- read from the moves whose source lies in the frontier's range only. The moves files are
-- sorted by source, so Parquet's row-group statistics skip every other move: a level reads
-- its own moves, not a row for every position as reachable_level.sql's `children` does.
-- The engine then keeps those no level has seen (pipeline/engines/spark_runs.py).
-- Views: frontier, transitions. Parameters: level, lo and hi (the frontier's least and
-- greatest id).
SELECT id, CAST(:level AS INT) AS at
FROM (SELECT DISTINCT t.dst AS id
      FROM transitions AS t
      LEFT SEMI JOIN frontier AS f ON f.id = t.src
      WHERE t.src BETWEEN :lo AND :hi)
