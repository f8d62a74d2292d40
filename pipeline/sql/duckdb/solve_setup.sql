-- Retrograde analysis, setup: the reverse adjacency and one state row per position.
-- Variables: positions, transitions (Parquet paths), and pipeline/core/values.py's.
-- Ids are narrowed to INTEGER: spaces are capped far below 2^31 positions.

-- Each position's parents as one LIST: a level joins its frontier to this table once and
-- unnests only the parents of the positions it decided.
CREATE TEMP TABLE rev AS
SELECT dst::INTEGER AS id, list(src::INTEGER) AS parents
FROM read_parquet(getvariable('transitions'))
GROUP BY dst;

-- val: 0 undecided, else the value's code (pipeline/core/values.py: getvariable('win'), …;
-- a code c is the word getvariable('value_names')[c]). pending: children not yet known to
-- be won. Rows stay in the positions file's order (by id), so the result needs no sort.
CREATE TEMP TABLE st AS
SELECT id::INTEGER AS id,
       moves AS pending,
       coalesce(list_position(getvariable('value_names'), terminal), 0)::TINYINT AS val,
       CASE WHEN terminal IS NOT NULL THEN 0 END::INTEGER AS rem
FROM read_parquet(getvariable('positions'));
