-- Seed 003's state graph of chopsticks, counted the seed's way, and who wins.
-- The seed's nodes are (whose turn, first player's hands, second player's hands) reachable
-- from the start; its edges are distinct node pairs. Stored positions are from the mover's
-- side, so a node is a (turn, position) pair: turn 0 when the first player moves.
-- Parameters: ruleset (a chopsticks ruleset id; the seed's is 'chopsticks').
-- Example: tablebase query seed003_state_graph --param ruleset=chopsticks
-- Answer for 'chopsticks': 165 nodes, 273 edges, 8 finished nodes won by each player,
-- and the second player wins.
WITH RECURSIVE
moves AS (
    SELECT src, dst FROM transitions WHERE ruleset = $ruleset
),
start AS (
    SELECT t.id, t.value
    FROM tablebase AS t JOIN catalog AS c ON c.ruleset = t.ruleset AND c.start = t.position
    WHERE t.ruleset = $ruleset
),
nodes(turn, id) AS (
    SELECT 0, id FROM start
    UNION
    SELECT 1 - n.turn, m.dst FROM nodes AS n JOIN moves AS m ON m.src = n.id
),
finished AS (
    -- a position at remoteness 0 is a finished game: 'loss' means the mover has lost
    SELECT n.turn, t.value
    FROM nodes AS n JOIN tablebase AS t ON t.ruleset = $ruleset AND t.id = n.id
    WHERE t.remoteness = 0
)
SELECT
    (SELECT count(*) FROM nodes) AS nodes,
    (SELECT count(*) FROM nodes AS n JOIN moves AS m ON m.src = n.id) AS edges,
    (SELECT count(*) FROM finished WHERE (turn = 0) = (value = 'win')) AS finished_won_by_first,
    (SELECT count(*) FROM finished WHERE (turn = 0) = (value = 'loss')) AS finished_won_by_second,
    (SELECT CASE value WHEN 'win' THEN 'first player' WHEN 'loss' THEN 'second player' ELSE 'nobody (draw)' END
     FROM start) AS winner;
