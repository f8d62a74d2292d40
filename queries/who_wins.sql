-- Who wins from the start, for every built ruleset, and how fast.
-- Values are the first player's: 'win' means the first player can force a win,
-- 'loss' that the second player can, 'tie' that neither can but the game ends with nobody
-- winning, 'draw' that neither can and play goes on forever.
-- Parameters: none.
-- Example: tablebase query who_wins
-- Answer for 'chopsticks': the second player wins, in 8 plies.
SELECT ruleset,
       start,
       CASE start_value WHEN 'win' THEN 'first player' WHEN 'loss' THEN 'second player'
            WHEN 'tie' THEN 'nobody (tie)' ELSE 'nobody (draw)' END AS winner,
       start_remoteness AS plies,
       start_grundy AS grundy,
       positions
FROM catalog
ORDER BY game, ruleset;
