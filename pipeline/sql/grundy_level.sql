-- Grundy, one level, step 2: the mex of the children of the `ready` positions (id),
-- every one of which has its value. Variable: level (the height).
-- (The children are materialised first: DuckDB 2.0.0 fails an internal assertion,
-- "dict-surviving join … build pipeline is not single-source", when the unnest feeds
-- the join directly.)
CREATE OR REPLACE TEMP TABLE kids AS
SELECT r.id, unnest(f.children) AS child FROM ready AS r JOIN fwd AS f USING (id);

CREATE OR REPLACE TEMP TABLE computed AS
SELECT k.id, mex(list(g.grundy)) AS grundy
FROM kids AS k JOIN gst AS g ON g.id = k.child
GROUP BY k.id;

UPDATE gst SET grundy = computed.grundy, height = getvariable('level')
FROM computed
WHERE gst.id = computed.id
RETURNING gst.id
