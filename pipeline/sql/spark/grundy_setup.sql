-- Grundy values on Spark, level 0: the positions without moves have value 0 and height 0.
-- gpending: children without a value yet; seen: the values of those with one.
-- View: positions.
SELECT id,
       moves AS gpending,
       CAST(array() AS ARRAY<INT>) AS seen,
       CASE WHEN moves = 0 THEN 0 END AS grundy,
       CASE WHEN moves = 0 THEN 0 END AS height
FROM positions
