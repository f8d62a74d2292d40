-- Seed 001's table: who wins sticks (棒消し) from the start, for every built number of
-- rows, beside what the seed published (misère, rows 1-10: the first player wins for
-- 2, 4, 5, 6, 8, 9, 10 and the second for 1, 3, 7).
-- Parameters: none.
-- Example: tablebase query seed001_sticks_table
-- Answer: one row per built sticks ruleset without a max_take, ordered by play and rows.
SELECT c.params['play'] AS play,
       c.params['rows']::INTEGER AS rows,
       CASE c.start_value WHEN 'win' THEN 'first' WHEN 'loss' THEN 'second' END AS winner,
       c.start_remoteness,
       c.positions,
       c.transitions,
       CASE WHEN c.params['play'] = 'misere' AND c.params['rows']::INTEGER <= 10
            THEN CASE WHEN c.params['rows']::INTEGER IN (1, 3, 7) THEN 'second' ELSE 'first' END
       END AS seed_says
FROM catalog AS c
WHERE c.game = 'sticks' AND c.params['max_take'] = 'none'
ORDER BY play, rows;
