-- Seed 002, rule 5 (nim, variant=arrow-other: take from the pointed heap, then point at
-- another heap): "a position is lost exactly when the number of heaps is even and the
-- pointed heap is a smallest heap", put to the test on every position of every
-- normal-play nim ruleset with variant=arrow-other in the catalog. (No heap left: zero
-- heaps, even, and no heap to point at; the game is over and lost, counted as 'loss'.)
-- Parameters: none.
-- Example: tablebase query claim_nim_arrow_other
-- Answer: per ruleset, 'holds on N positions', or one 'fails' row per counterexample
-- with the position, the value the rule gives and the value the tablebase computed.
WITH checked AS (
    SELECT t.ruleset, t.position, t.value AS computed,
           CASE WHEN len(t.heaps) % 2 = 0 AND (len(t.heaps) = 0 OR t.arrow = list_min(t.heaps))
                THEN 'loss' ELSE 'win' END AS claimed
    FROM tablebase AS t JOIN catalog AS c USING (ruleset)
    WHERE c.game = 'nim' AND c.params['variant'] = 'arrow-other' AND c.params['play'] = 'normal'
)
SELECT ruleset, 'holds on ' || count(*) || ' positions' AS verdict,
       NULL AS position, NULL AS claimed, NULL AS computed
FROM checked GROUP BY ruleset HAVING count(*) FILTER (WHERE claimed <> computed) = 0
UNION ALL
SELECT ruleset, 'fails', position, claimed, computed FROM checked WHERE claimed <> computed
ORDER BY ruleset, position NULLS FIRST;
