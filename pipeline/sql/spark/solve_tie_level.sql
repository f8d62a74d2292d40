-- Retrograde analysis for ties on Spark, one level, once every win and loss is known: the
-- undecided parents of the positions tied at the level before (`frontier`: id) are tied
-- now, at remoteness :level. As sql/duckdb/solve_tie_level.sql, returning the whole state.
-- Views: st, frontier, parents (parents.sql). Parameters: level, tie.
WITH hits AS (
    SELECT DISTINCT src AS id
    FROM (SELECT explode(p.srcs) AS src
          FROM frontier AS f
          JOIN parents AS p ON p.id = f.id)
)
SELECT st.id, st.pending,
       CASE WHEN st.val = 0 AND h.id IS NOT NULL THEN :tie ELSE st.val END AS val,
       CASE WHEN st.val = 0 AND h.id IS NOT NULL THEN :level ELSE st.rem END AS rem
FROM st
LEFT JOIN hits AS h ON h.id = st.id
