-- Seed 002, rule 2 (nim, variant=largest: take only from a largest heap): "a position is
-- lost exactly when the number of heaps of the largest size is even", put to the test on
-- every position of every normal-play nim ruleset with variant=largest in the catalog.
-- (With no heap left there are zero largest heaps: even, lost.)
-- Parameters: none.
-- Example: tablebase query claim_nim_largest
-- Answer: per ruleset, 'holds on N positions', or one 'fails' row per counterexample
-- with the position, the value the rule gives and the value the tablebase computed.
WITH checked AS (
    SELECT t.ruleset, t.position, t.value AS computed,
           CASE WHEN len(list_filter(t.heaps, lambda h: h = list_max(t.heaps))) % 2 = 0
                THEN 'loss' ELSE 'win' END AS claimed
    FROM tablebase AS t JOIN catalog AS c USING (ruleset)
    WHERE c.game = 'nim' AND c.params['variant'] = 'largest' AND c.params['play'] = 'normal'
)
SELECT ruleset, 'holds on ' || count(*) || ' positions' AS verdict,
       NULL AS position, NULL AS claimed, NULL AS computed
FROM checked GROUP BY ruleset HAVING count(*) FILTER (WHERE claimed <> computed) = 0
UNION ALL
SELECT ruleset, 'fails', position, claimed, computed FROM checked WHERE claimed <> computed
ORDER BY ruleset, position NULLS FIRST;
