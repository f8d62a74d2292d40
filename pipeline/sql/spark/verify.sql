-- Every stored value checked against the values of its children and the rules, on Spark:
-- the view `facts`, one row per position with what its children's values say, with the
-- same columns as sql/duckdb/verify.sql; pipeline/stages/verify.py holds the checks over
-- it. `code` is a value's code, NULL for a word that is not a value. The solver-made
-- columns are passed on as stored (the placeholder `solver_made`: pipeline/core/dataset.py).
-- Views: positions, transitions, solution. Parameters: impartial, the codes win, loss,
-- tie, draw and the words win_word, loss_word, tie_word, draw_word.
WITH s AS (
    SELECT id, value,
           CASE value WHEN :win_word THEN :win WHEN :loss_word THEN :loss WHEN :tie_word THEN :tie
                      WHEN :draw_word THEN :draw END AS code,
           remoteness, grundy, grundy_height{solver_made}
    FROM solution
), kids AS (
    SELECT t.src AS id,
           count(*) AS children,
           count(c.id) AS known_children,
           count(*) FILTER (WHERE c.code = :loss) AS loss_children,
           min(c.remoteness) FILTER (WHERE c.code = :loss) AS min_loss,
           count(*) FILTER (WHERE c.code = :win) AS win_children,
           max(c.remoteness) FILTER (WHERE c.code = :win) AS max_win,
           count(*) FILTER (WHERE c.code = :tie) AS tie_children,
           min(c.remoteness) FILTER (WHERE c.code = :tie) AS min_tie,
           count(*) FILTER (WHERE c.code = :draw) AS draw_children,
           count(c.grundy) AS grundy_children,
           collect_set(c.grundy) AS child_grundy,
           max(c.grundy_height) AS max_child_height
    FROM transitions AS t
    LEFT JOIN s AS c ON c.id = t.dst
    GROUP BY t.src
), play AS (
    -- normal play: every finished position is lost by the mover
    SELECT bool_and(terminal = :loss_word) AS normal_play FROM positions WHERE terminal IS NOT NULL
)
SELECT p.id, p.terminal,
       CASE p.terminal WHEN :win_word THEN :win WHEN :loss_word THEN :loss WHEN :tie_word THEN :tie
                       WHEN :draw_word THEN :draw END AS terminal_code,
       p.moves, s.value, s.code, s.remoteness, s.id IS NOT NULL AS solved,
       coalesce(k.children, 0) AS children, coalesce(k.known_children, 0) AS known_children,
       coalesce(k.loss_children, 0) AS loss_children, k.min_loss,
       coalesce(k.win_children, 0) AS win_children, k.max_win,
       coalesce(k.tie_children, 0) AS tie_children, k.min_tie,
       coalesce(k.draw_children, 0) AS draw_children,
       s.grundy, s.grundy_height, coalesce(k.grundy_children, 0) AS grundy_children,
       coalesce(array_contains(k.child_grundy, s.grundy), false) AS grundy_taken,
       size(filter(coalesce(k.child_grundy, array()), g -> g < s.grundy)) AS grundy_below,
       k.max_child_height{solver_made},
       :impartial AS impartial,
       play.normal_play
FROM positions AS p
CROSS JOIN play
LEFT JOIN s ON s.id = p.id
LEFT JOIN kids AS k ON k.id = p.id
