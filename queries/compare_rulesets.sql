-- Compare two rulesets of the same game: who wins each from the start and in how many plies,
-- then the positions whose value differs, counted by (value in A, value in B), with up to
-- three example positions each. A position found in only one of them counts as 'absent' in
-- the other. Every position of both is read: on two rulesets of half a billion positions
-- (dobutsu and dobutsu:try=off) that takes minutes; `variants` answers who wins at once.
-- Parameters: ruleset_a, ruleset_b (ruleset ids of the same game).
-- Example: tablebase query compare_rulesets -p ruleset_a=chopsticks -p ruleset_b=chopsticks:split=any
-- Answer: first a row of kind 'start' (each start's value for the player to move, and its
-- plies), then one row of kind 'changed' per (value_a, value_b) pair that differs, most
-- positions first.
WITH a AS (
    SELECT position, value FROM tablebase WHERE ruleset = $ruleset_a
), b AS (
    SELECT position, value FROM tablebase WHERE ruleset = $ruleset_b
), same_game AS (
    SELECT CASE WHEN count(DISTINCT game) > 1
                THEN error('compare_rulesets: ' || $ruleset_a || ' and ' || $ruleset_b || ' are different games')
           END AS ok
    FROM catalog WHERE ruleset IN ($ruleset_a, $ruleset_b)
), starts AS (
    SELECT 'start' AS kind,
           any_value(start_value) FILTER (WHERE ruleset = $ruleset_a) AS value_a,
           any_value(start_remoteness) FILTER (WHERE ruleset = $ruleset_a) AS plies_a,
           any_value(start_value) FILTER (WHERE ruleset = $ruleset_b) AS value_b,
           any_value(start_remoteness) FILTER (WHERE ruleset = $ruleset_b) AS plies_b,
           1::BIGINT AS positions,
           list(DISTINCT start ORDER BY start) AS examples
    FROM catalog WHERE ruleset IN ($ruleset_a, $ruleset_b)
), changed AS (
    SELECT 'changed' AS kind,
           coalesce(a.value, 'absent') AS value_a,
           NULL::INTEGER AS plies_a,
           coalesce(b.value, 'absent') AS value_b,
           NULL::INTEGER AS plies_b,
           count(*) AS positions,
           list(coalesce(a.position, b.position) ORDER BY coalesce(a.position, b.position))[1:3] AS examples
    FROM a FULL OUTER JOIN b USING (position), same_game
    WHERE a.value IS DISTINCT FROM b.value AND same_game.ok IS NULL
    GROUP BY 1, 2, 3, 4, 5
)
SELECT starts.* FROM starts, same_game WHERE same_game.ok IS NULL
UNION ALL
SELECT * FROM changed
ORDER BY kind = 'changed', positions DESC, value_a, value_b;
