-- Seed 004's winning move: from the whole tree of each hackenbush ruleset, its Grundy
-- value and every winning move (a cut leaving Grundy value 0, i.e. a lost position for
-- the opponent). The seed says its example tree (ruleset 'hackenbush') has value 6 and
-- exactly one winning move, cutting the edge to node 4.
-- Parameters: none.
-- Example: tablebase query seed004_winning_moves
-- Answer: one row per hackenbush ruleset; for 'hackenbush': 6, [cut 4], agrees = true.
WITH starts AS (
    SELECT c.ruleset, c.start, c.start_grundy, t.id
    FROM catalog AS c JOIN tablebase AS t ON t.ruleset = c.ruleset AND t.position = c.start
    WHERE c.game = 'hackenbush'
), winning AS (
    SELECT s.ruleset, list(m.move ORDER BY m.move) AS moves
    FROM starts AS s
    JOIN transitions AS m ON m.ruleset = s.ruleset AND m.src = s.id
    JOIN tablebase AS c ON c.ruleset = s.ruleset AND c.id = m.dst
    WHERE c.grundy = 0
    GROUP BY s.ruleset
)
SELECT s.ruleset, s.start, s.start_grundy AS grundy,
       coalesce(w.moves, []) AS winning_moves,
       CASE WHEN s.ruleset = 'hackenbush'
            THEN s.start_grundy = 6 AND coalesce(w.moves, []) = ['cut 4'] END AS agrees_with_seed
FROM starts AS s LEFT JOIN winning AS w USING (ruleset)
ORDER BY s.ruleset;
