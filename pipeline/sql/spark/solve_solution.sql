-- Retrograde analysis, the solution: every position's value (a code 0, never decided, is a
-- draw), remoteness, and Grundy value and height (impartial games only: `gst` is empty
-- otherwise), and winning moves (the children lost: none where the position is no win), in id order.
-- Parameters: impartial, and pipeline/core/values.py's (the codes and the words).
SELECT st.id,
       element_at(array(:win_word, :loss_word, :tie_word, :draw_word),
                  CASE st.val WHEN 0 THEN :draw ELSE st.val END) AS value,
       st.rem AS remoteness,
       CASE WHEN :impartial THEN g.grundy END AS grundy,
       CASE WHEN :impartial THEN g.height END AS height,
       coalesce(w.winning, 0) AS winning_moves
FROM st
LEFT JOIN gst AS g ON g.id = st.id
LEFT JOIN (
    SELECT t.src AS id, CAST(count(*) AS INT) AS winning
    FROM transitions AS t
    JOIN st AS c ON c.id = t.dst AND c.val = :loss
    GROUP BY t.src
) AS w ON w.id = st.id
ORDER BY st.id
