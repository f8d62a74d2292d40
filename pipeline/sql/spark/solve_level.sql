-- Retrograde analysis on Spark, one level: the state after deciding the parents of the
-- positions won or lost at the level before (`frontier`: id, val). As
-- sql/duckdb/solve_level.sql, but Spark has no UPDATE: the whole state is returned (and
-- checkpointed by the engine); the rows decided now are those with rem = :level.
-- A lost child weighs :lost_weight (more than any count of won children), a won child 1.
-- The frontier meets `parents` (each position's list of parents, a row a position, one
-- entry a move: parents.sql), not every move: a level reads a row a position.
-- Views: st, frontier, parents. Parameters: level, and pipeline/core/values.py's (win,
-- loss, lost_weight).
WITH hits AS (
    SELECT src AS id, sum(weight) AS weight
    FROM (SELECT explode(p.srcs) AS src, CASE WHEN f.val = :loss THEN :lost_weight ELSE 1 END AS weight
          FROM frontier AS f
          JOIN parents AS p ON p.id = f.id)
    GROUP BY src
)
SELECT st.id,
       CASE WHEN st.val <> 0 OR h.id IS NULL THEN st.pending
            WHEN h.weight >= :lost_weight THEN 0 ELSE st.pending - h.weight END AS pending,
       CASE WHEN st.val <> 0 OR h.id IS NULL THEN st.val
            WHEN h.weight >= :lost_weight THEN :win
            WHEN st.pending = h.weight THEN :loss ELSE 0 END AS val,
       CASE WHEN st.val <> 0 OR h.id IS NULL THEN st.rem
            WHEN h.weight >= :lost_weight OR st.pending = h.weight THEN :level END AS rem
FROM st
LEFT JOIN hits AS h ON h.id = st.id
