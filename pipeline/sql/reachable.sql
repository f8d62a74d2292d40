-- Positions reachable from the start by play. Variables: transitions (Parquet path), start (id).
-- UNION in a recursive CTE keeps only rows not seen before, so each position's children
-- are expanded once.
CREATE TEMP TABLE reachable AS
WITH RECURSIVE fwd AS (
    SELECT src::INTEGER AS id, list(dst::INTEGER) AS children
    FROM read_parquet(getvariable('transitions'))
    GROUP BY src
), reach(id) AS (
    SELECT getvariable('start')::INTEGER
    UNION
    SELECT unnest(f.children) FROM reach JOIN fwd AS f USING (id)
)
SELECT id FROM reach;
