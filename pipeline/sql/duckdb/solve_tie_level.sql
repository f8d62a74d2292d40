-- Retrograde analysis for ties, one level, once every win and loss is known: a position
-- neither won nor lost with a tied child is a tie (the mover prefers a tie to endless
-- play), one ply after its nearest tied child. The `frontier` (id) holds the positions
-- tied at the previous level, so levels go by remoteness and each position takes the
-- smallest. Variables: level (the new remoteness), the value codes (pipeline/core/values.py).
-- Each transition is unnested at most once, when its child is tied.
WITH hits AS (
    SELECT DISTINCT unnest(r.parents) AS id
    FROM frontier AS f
    JOIN rev AS r USING (id)
)
UPDATE st
SET val = getvariable('tie'), rem = getvariable('level')
FROM hits
WHERE st.id = hits.id AND st.val = 0
RETURNING st.id, st.val
