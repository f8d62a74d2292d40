-- Grundy, one level, step 2: the mex of the children of the `ready` positions (id),
-- every one of which has its value. Variable: level (the height).
WITH kids AS (
    SELECT r.id, unnest(f.children) AS child FROM ready AS r JOIN fwd AS f USING (id)
), values_ AS (
    SELECT k.id, mex(list(g.grundy)) AS grundy
    FROM kids AS k JOIN gst AS g ON g.id = k.child
    GROUP BY k.id
)
UPDATE gst SET grundy = values_.grundy, height = getvariable('level')
FROM values_
WHERE gst.id = values_.id
RETURNING gst.id
