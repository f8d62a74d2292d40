-- Grundy, one level, step 1: count down the parents of the `frontier` (id: positions
-- computed on the level before). Returns the touched rows; gpending = 0 are ready.
WITH hits AS (
    SELECT id, count(*)::INTEGER AS n
    FROM (SELECT unnest(r.parents) AS id FROM frontier AS f JOIN rev AS r USING (id))
    GROUP BY id
)
UPDATE gst SET gpending = gst.gpending - hits.n
FROM hits
WHERE gst.id = hits.id
RETURNING gst.id, gst.gpending
