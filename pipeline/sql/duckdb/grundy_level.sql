-- Grundy, one level: push the values of the `frontier` (id, grundy: computed on the level
-- before) to their parents. Variable: level (the height of what completes now).
-- Returns the touched rows; those with a grundy are the next frontier.
WITH hits AS (
    SELECT id, count(*)::INTEGER AS n,
           bitstring_agg(grundy, 0, getvariable('width') - 1) AS mask
    FROM (SELECT unnest(r.parents) AS id, f.grundy FROM frontier AS f JOIN rev AS r USING (id))
    GROUP BY id
)
UPDATE gst
SET gpending = gst.gpending - hits.n,
    mask = coalesce(gst.mask | hits.mask, hits.mask),
    grundy = CASE WHEN gst.gpending = hits.n
                  THEN bit_position('0'::BIT, coalesce(gst.mask | hits.mask, hits.mask)) - 1 END,
    height = CASE WHEN gst.gpending = hits.n THEN getvariable('level') END
FROM hits
WHERE gst.id = hits.id
RETURNING gst.id, gst.grundy
