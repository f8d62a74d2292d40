-- Retrograde analysis, the solution: every position's value (a code 0, never decided, is a
-- draw), remoteness, and Grundy value and height (impartial games only: `gst` is empty
-- otherwise), in id order.
-- Parameters: impartial, and pipeline/core/values.py's (the codes and the words).
SELECT st.id,
       element_at(array(:win_word, :loss_word, :tie_word, :draw_word),
                  CASE st.val WHEN 0 THEN :draw ELSE st.val END) AS value,
       st.rem AS remoteness,
       CASE WHEN :impartial THEN g.grundy END AS grundy,
       CASE WHEN :impartial THEN g.height END AS height
FROM st LEFT JOIN gst AS g ON g.id = st.id
ORDER BY st.id
