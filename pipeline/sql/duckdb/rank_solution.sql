-- Solving rank by rank: the solution's rows of the rank just solved (the view `solved`,
-- one of rank_level.sql's tables), its scores decoded (rank_setup.sql) into value and
-- remoteness, in id order, the solver-made columns passed on (the placeholder
-- `solver_made`: each one's name after a comma, from pipeline/core/dataset.py).
-- Variables: pipeline/core/values.py's (band, value_names, codes).
SELECT id,
       getvariable('value_names')[CASE score // getvariable('band') WHEN 0 THEN getvariable('win')
                                  WHEN 1 THEN getvariable('tie') ELSE getvariable('loss') END] AS value,
       CASE score // getvariable('band') WHEN 0 THEN score
            WHEN 1 THEN 2 * getvariable('band') - 1 - score
            ELSE 3 * getvariable('band') - 1 - score END AS remoteness,
       grundy, height{solver_made}
FROM solved
