-- The principal variation from a position: the line of play when both sides play best
-- (the winner ends as fast as possible, the loser holds out as long as possible, a side
-- that can only tie ties as fast as possible, one that can only draw keeps the draw),
-- until the game ends or, for a draw, for 40 plies.
-- Among equally good moves the one whose label sorts first is shown.
-- Parameters: ruleset (a ruleset id), position (a position text of that ruleset).
-- Example: tablebase query principal_variation -p ruleset=chopsticks -p position='1-1|1-1'
-- Answer: one row per ply: the move played and the position it leads to, with its value
-- and remoteness for the player then to move.
WITH RECURSIVE
moves AS (
    SELECT m.src, m.dst, m.move, c.position, c.value, c.remoteness,
           -- the mover's preference: a lost child (fastest first), a tied one (fastest first),
           -- a draw, a won one (slowest first)
           CASE c.value WHEN 'loss' THEN c.remoteness WHEN 'tie' THEN 500000000 + c.remoteness
                WHEN 'draw' THEN 1000000000 ELSE 2000000000 - c.remoteness END AS preference
    FROM transitions AS m JOIN tablebase AS c ON c.ruleset = m.ruleset AND c.id = m.dst
    WHERE m.ruleset = $ruleset
),
line(ply, id, move, position, value, remoteness) AS (
    SELECT 0, id, NULL::VARCHAR, position, value, remoteness
    FROM tablebase WHERE ruleset = $ruleset AND position = $position
    UNION ALL
    -- the chosen move's row taken whole: arg_min skips NULL arguments, so a draw's NULL
    -- remoteness taken on its own would come from another move
    SELECT ply, best.dst, best.move, best.position, best.value, best.remoteness
    FROM (SELECT any_value(l.ply) + 1 AS ply,
                 arg_min({'dst': m.dst, 'move': m.move, 'position': m.position, 'value': m.value,
                          'remoteness': m.remoteness}, (m.preference, m.move)) AS best
          FROM line AS l JOIN moves AS m ON m.src = l.id
          WHERE l.ply < 40
          GROUP BY l.id)
)
SELECT ply, move, position, value, remoteness FROM line ORDER BY ply;
