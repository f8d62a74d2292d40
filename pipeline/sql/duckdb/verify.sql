-- Every stored value checked against the values of its children and the rules.
-- Variables: positions, transitions, solution (Parquet paths), impartial, and
-- pipeline/values.py's (value_names, one code per value: getvariable('loss'), …).
-- One row per position with what its children's values say; pipeline/stages/verify.py
-- holds the checks over these facts. grundy_taken: some child has the position's Grundy
-- value; grundy_below: how many distinct values below it the children have. `code` is a value's code, NULL for a word that is
-- not a value.
CREATE TEMP TABLE facts AS
WITH s AS (
    SELECT id, value, list_position(getvariable('value_names'), value) AS code,
           remoteness, grundy, grundy_height
    FROM read_parquet(getvariable('solution'))
), kids AS (
    SELECT t.src AS id,
           count(*) AS children,
           count(c.id) AS known_children,
           count(*) FILTER (WHERE c.code = getvariable('loss')) AS loss_children,
           min(c.remoteness) FILTER (WHERE c.code = getvariable('loss')) AS min_loss,
           count(*) FILTER (WHERE c.code = getvariable('win')) AS win_children,
           max(c.remoteness) FILTER (WHERE c.code = getvariable('win')) AS max_win,
           count(*) FILTER (WHERE c.code = getvariable('tie')) AS tie_children,
           min(c.remoteness) FILTER (WHERE c.code = getvariable('tie')) AS min_tie,
           count(*) FILTER (WHERE c.code = getvariable('draw')) AS draw_children,
           count(c.grundy) AS grundy_children,
           list(DISTINCT c.grundy) FILTER (WHERE c.grundy IS NOT NULL) AS child_grundy,
           max(c.grundy_height) AS max_child_height
    FROM read_parquet(getvariable('transitions')) AS t
    LEFT JOIN s AS c ON c.id = t.dst
    GROUP BY t.src
)
SELECT p.id, p.text, p.terminal, list_position(getvariable('value_names'), p.terminal) AS terminal_code,
       p.moves, s.value, s.code, s.remoteness, s.id IS NOT NULL AS solved,
       coalesce(k.children, 0) AS children, coalesce(k.known_children, 0) AS known_children,
       coalesce(k.loss_children, 0) AS loss_children, k.min_loss,
       coalesce(k.win_children, 0) AS win_children, k.max_win,
       coalesce(k.tie_children, 0) AS tie_children, k.min_tie,
       coalesce(k.draw_children, 0) AS draw_children,
       s.grundy, s.grundy_height, coalesce(k.grundy_children, 0) AS grundy_children,
       list_contains(coalesce(k.child_grundy, []), s.grundy) AS grundy_taken,
       len(list_filter(coalesce(k.child_grundy, []), lambda g: g < s.grundy)) AS grundy_below,
       k.max_child_height,
       getvariable('impartial') AS impartial,
       -- normal play: every finished position is lost by the mover
       (SELECT bool_and(terminal = getvariable('value_names')[getvariable('loss')])
        FROM read_parquet(getvariable('positions')) WHERE terminal IS NOT NULL) AS normal_play
FROM read_parquet(getvariable('positions')) AS p
LEFT JOIN s USING (id)
LEFT JOIN kids AS k USING (id);
