-- Solving rank by rank, for files of few rows (pipeline/engines/duckdb_engine.py, LOAD_ROWS):
-- the moves and the positions held in tables, read once. Their row groups (DuckDB's, of
-- ~120 k rows, with min/max) are skipped by a rank's id range as the files' are.
DROP VIEW moves;
CREATE TEMP TABLE moves AS
SELECT src::INTEGER AS src, dst::INTEGER AS dst FROM read_parquet(getvariable('transitions'));

DROP VIEW pos;
CREATE TEMP TABLE pos AS
SELECT id::INTEGER AS id, terminal, moves, rank FROM read_parquet(getvariable('positions'));
