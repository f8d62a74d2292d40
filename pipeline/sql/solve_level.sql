-- Retrograde analysis, one level: decide the parents of the positions decided at the
-- previous level (the `frontier`: id, val). Variable: level (the new remoteness).
-- A parent with a lost child is won; a parent whose last pending child was just won is
-- lost. Each transition is unnested once in the whole solve, when its child is decided.
-- Returns every touched undecided row; those with val > 0 are the next frontier.
WITH hits AS (
    SELECT unnest(r.parents) AS id, f.val
    FROM frontier AS f
    JOIN rev AS r USING (id)
), agg AS (
    SELECT id,
           bool_or(val = 2) AS lost_child,
           (count(*) FILTER (WHERE val = 1))::INTEGER AS won
    FROM hits
    GROUP BY id
)
UPDATE st
SET pending = st.pending - agg.won,
    val = CASE WHEN agg.lost_child THEN 1 WHEN st.pending = agg.won THEN 2 ELSE 0 END,
    rem = CASE WHEN agg.lost_child OR st.pending = agg.won THEN getvariable('level') END
FROM agg
WHERE st.id = agg.id AND st.val = 0
RETURNING st.id, st.val
