-- Puzzles: won positions with exactly one winning move (every other move throws the win
-- away), reachable from the start, the longest wins first, with the one move to find.
-- Parameters: ruleset (a ruleset id).
-- Example: tablebase query puzzles -p ruleset=chopsticks:split=any
-- Answer: up to twenty rows: position, remoteness, moves (how many there are), the move.
SELECT t.position, t.remoteness, count(*) AS moves,
       any_value(m.move) FILTER (WHERE c.value = 'loss') AS winning_move
FROM tablebase AS t
JOIN transitions AS m ON m.ruleset = t.ruleset AND m.src = t.id
JOIN tablebase AS c ON c.ruleset = t.ruleset AND c.id = m.dst
WHERE t.ruleset = $ruleset AND t.value = 'win' AND t.winning_moves = 1 AND t.reachable
GROUP BY t.position, t.remoteness
HAVING count(*) > 1
ORDER BY t.remoteness DESC, t.position
LIMIT 20;
