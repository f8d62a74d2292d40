-- Positions reachable from the start by play, breadth first.
-- Variables: positions, transitions (Parquet paths). Each level (reachable_level.sql)
-- expands the children of the positions first seen on the level before, so each
-- position's children are expanded once.
CREATE TEMP TABLE fwd AS
SELECT src::INTEGER AS id, list(dst::INTEGER) AS children
FROM read_parquet(getvariable('transitions'))
GROUP BY src;

CREATE TEMP TABLE reach AS
SELECT id::INTEGER AS id, false AS seen FROM read_parquet(getvariable('positions'));
