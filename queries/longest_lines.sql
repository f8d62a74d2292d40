-- The longest forced wins, losses and ties of a ruleset: the ten positions of each value
-- with the greatest remoteness, those reachable from the start first among equals.
-- Parameters: ruleset (a ruleset id).
-- Example: tablebase query longest_lines -p ruleset=chopsticks:split=any
-- Answer: up to ten 'win', ten 'tie' and ten 'loss' rows, longest first.
SELECT value, remoteness, position, reachable
FROM (
    SELECT value, remoteness, position, reachable,
           row_number() OVER (PARTITION BY value ORDER BY remoteness DESC, reachable DESC, position) AS rank
    FROM tablebase
    WHERE ruleset = $ruleset AND value <> 'draw'
)
WHERE rank <= 10
ORDER BY CASE value WHEN 'win' THEN 0 WHEN 'tie' THEN 1 ELSE 2 END, remoteness DESC, reachable DESC, position;
