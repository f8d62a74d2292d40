-- Seed 002, rule 4 (nim, variant=arrow: take from the pointed heap, then point anywhere):
-- "a position is lost exactly when either some heap has other than 1 stone, the pointed
-- heap has 1 stone and the number of 1-stone heaps is odd; or every heap has 1 stone and
-- the number of heaps is even", put to the test on every position of every normal-play
-- nim ruleset with variant=arrow in the catalog. (No heap left: every heap, of none, has
-- 1 stone and there are zero heaps, so 'loss'.)
-- Parameters: none.
-- Example: tablebase query claim_nim_arrow
-- Answer: per ruleset, 'holds on N positions', or one 'fails' row per counterexample
-- with the position, the value the rule gives and the value the tablebase computed.
WITH checked AS (
    SELECT t.ruleset, t.position, t.value AS computed,
           CASE WHEN (list_bool_or(list_transform(t.heaps, lambda h: h <> 1)) AND t.arrow = 1
                      AND len(list_filter(t.heaps, lambda h: h = 1)) % 2 = 1)
                  OR (NOT coalesce(list_bool_or(list_transform(t.heaps, lambda h: h <> 1)), false)
                      AND len(t.heaps) % 2 = 0)
                THEN 'loss' ELSE 'win' END AS claimed
    FROM tablebase AS t JOIN catalog AS c USING (ruleset)
    WHERE c.game = 'nim' AND c.params['variant'] = 'arrow' AND c.params['play'] = 'normal'
)
SELECT ruleset, 'holds on ' || count(*) || ' positions' AS verdict,
       NULL AS position, NULL AS claimed, NULL AS computed
FROM checked GROUP BY ruleset HAVING count(*) FILTER (WHERE claimed <> computed) = 0
UNION ALL
SELECT ruleset, 'fails', position, claimed, computed FROM checked WHERE claimed <> computed
ORDER BY ruleset, position NULLS FIRST;
