-- Solving rank by rank, the solution: every rank's results (the view `res`, rank_level.sql's
-- rows), their packed scores decoded into value and remoteness, in id order, the
-- solver-made columns passed on (the placeholder `solver_made`: pipeline/core/dataset.py's names).
-- Parameters: pipeline/core/values.py's (band, the codes and the words).
SELECT id,
       element_at(array(:win_word, :loss_word, :tie_word, :draw_word),
                  CASE CAST(score DIV :band AS INT) WHEN 0 THEN :win WHEN 1 THEN :tie ELSE :loss END) AS value,
       CASE CAST(score DIV :band AS INT) WHEN 0 THEN score
            WHEN 1 THEN 2 * :band - 1 - score
            ELSE 3 * :band - 1 - score END AS remoteness,
       grundy, height{solver_made}
FROM res ORDER BY id
