-- Compare two rulesets of the same game: the positions whose value differs, counted by
-- (value in A, value in B), with up to three example positions each. A position found in
-- only one of them counts as 'absent' in the other.
-- Parameters: ruleset_a, ruleset_b (ruleset ids of the same game).
-- Example: tablebase query compare_rulesets -p ruleset_a=chopsticks -p ruleset_b=chopsticks:split=any
-- Answer: one row per (value_a, value_b) pair that differs, most positions first.
WITH a AS (
    SELECT position, value FROM tablebase WHERE ruleset = $ruleset_a
), b AS (
    SELECT position, value FROM tablebase WHERE ruleset = $ruleset_b
), same_game AS (
    SELECT CASE WHEN count(DISTINCT game) > 1
                THEN error('compare_rulesets: ' || $ruleset_a || ' and ' || $ruleset_b || ' are different games')
           END AS ok
    FROM catalog WHERE ruleset IN ($ruleset_a, $ruleset_b)
)
SELECT coalesce(a.value, 'absent') AS value_a,
       coalesce(b.value, 'absent') AS value_b,
       count(*) AS positions,
       list(coalesce(a.position, b.position) ORDER BY coalesce(a.position, b.position))[1:3] AS examples
FROM a FULL OUTER JOIN b USING (position), same_game
WHERE a.value IS DISTINCT FROM b.value AND same_game.ok IS NULL
GROUP BY ALL
ORDER BY positions DESC, value_a, value_b;
