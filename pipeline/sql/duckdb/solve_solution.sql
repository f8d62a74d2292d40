-- Retrograde analysis, the solution: every position's value (a code 0, never decided, is a
-- draw), remoteness, and Grundy value and height (impartial games only), in id order: st
-- and gst keep the positions file's order, so no sort is needed.
-- Variables: impartial, and pipeline/core/values.py's (value_names, draw).
SELECT st.id,
       getvariable('value_names')[CASE st.val WHEN 0 THEN getvariable('draw') ELSE st.val END] AS value,
       st.rem AS remoteness,
       CASE WHEN getvariable('impartial') THEN gst.grundy END AS grundy,
       CASE WHEN getvariable('impartial') THEN gst.height END AS height
FROM st POSITIONAL JOIN gst
