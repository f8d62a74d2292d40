-- Retrograde analysis on Spark, level 0: one state row per position. val: 0 undecided,
-- else the value's code (pipeline/core/values.py); pending: children not yet known to be won;
-- rem: the remoteness, set when the value is. View: positions. Parameters: the codes win,
-- loss, tie and the words win_word, loss_word, tie_word.
SELECT id,
       moves AS pending,
       CASE terminal WHEN :win_word THEN :win WHEN :loss_word THEN :loss WHEN :tie_word THEN :tie ELSE 0 END AS val,
       CASE WHEN terminal IS NOT NULL THEN 0 END AS rem
FROM positions
