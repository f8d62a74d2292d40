-- Seed 002, rule 3 (nim, variant=distinct: take from the largest heap, keep all sizes
-- distinct): "with n the size of the largest heap, a position is lost exactly when n is
-- even and a heap of n-1 stones exists", put to the test on every position of every
-- normal-play nim ruleset with variant=distinct in the catalog. The position with no heap
-- has no largest heap; the game is over there and it is lost, so it is counted as the
-- rule saying 'loss'.
-- Parameters: none.
-- Example: tablebase query claim_nim_distinct
-- Answer: per ruleset, 'holds on N positions', or one 'fails' row per counterexample
-- with the position, the value the rule gives and the value the tablebase computed.
WITH checked AS (
    SELECT t.ruleset, t.position, t.value AS computed,
           CASE WHEN len(t.heaps) = 0
                  OR (list_max(t.heaps) % 2 = 0 AND list_contains(t.heaps, list_max(t.heaps) - 1))
                THEN 'loss' ELSE 'win' END AS claimed
    FROM tablebase AS t JOIN catalog AS c USING (ruleset)
    WHERE c.game = 'nim' AND c.params['variant'] = 'distinct' AND c.params['play'] = 'normal'
)
SELECT ruleset, 'holds on ' || count(*) || ' positions' AS verdict,
       NULL AS position, NULL AS claimed, NULL AS computed
FROM checked GROUP BY ruleset HAVING count(*) FILTER (WHERE claimed <> computed) = 0
UNION ALL
SELECT ruleset, 'fails', position, claimed, computed FROM checked WHERE claimed <> computed
ORDER BY ruleset, position NULLS FIRST;
