-- Solving rank by rank, for a transitions file of few moves (pipeline/engines/duckdb_engine.py,
-- LOAD_MOVES): its moves held in a table, read once. Its row groups (DuckDB's, of ~120 k
-- rows, with min/max) are skipped by a rank's id range as the file's are.
DROP VIEW moves;
CREATE TEMP TABLE moves AS
SELECT src::INTEGER AS src, dst::INTEGER AS dst FROM read_parquet(getvariable('transitions'));
