-- Retrograde analysis, one level: decide the parents of the positions won or lost at the
-- previous level (the `frontier`: id, val). Variables: level (the new remoteness), and
-- pipeline/core/values.py's (the value codes, lost_weight).
-- A parent with a lost child is won; a parent whose last pending child was just won is
-- lost. Each transition is unnested once in the whole solve, when its child is decided.
-- One sum per parent carries both facts: a lost child weighs lost_weight (more than any
-- count of won children can reach), a won child 1.
-- Returns every touched undecided row; those with val > 0 are the next frontier.
WITH hits AS (
    SELECT id, sum(weight)::BIGINT AS weight
    FROM (
        SELECT unnest(r.parents) AS id, CASE f.val WHEN getvariable('loss') THEN getvariable('lost_weight') ELSE 1 END AS weight
        FROM frontier AS f
        JOIN rev AS r USING (id)
    )
    GROUP BY id
)
UPDATE st
SET pending = CASE WHEN hits.weight >= getvariable('lost_weight') THEN 0 ELSE st.pending - hits.weight END,
    val = CASE WHEN hits.weight >= getvariable('lost_weight') THEN getvariable('win')
               WHEN st.pending = hits.weight THEN getvariable('loss') ELSE 0 END,
    rem = CASE WHEN hits.weight >= getvariable('lost_weight') OR st.pending = hits.weight THEN getvariable('level') END
FROM hits
WHERE st.id = hits.id AND st.val = 0
RETURNING st.id, st.val
