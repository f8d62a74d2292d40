-- Seed 002, rule 6 (nim, variant=coin: heads take an even number, tails an odd number,
-- then the coin may be turned): "a position is lost exactly when, halving every heap
-- (rounding down), the XOR of the halves is 0, whichever side the coin shows", put to the
-- test on every position of every normal-play nim ruleset with variant=coin in the catalog.
-- Parameters: none.
-- Example: tablebase query claim_nim_coin
-- Answer: per ruleset, 'holds on N positions', or one 'fails' row per counterexample
-- with the position, the value the rule gives and the value the tablebase computed.
WITH checked AS (
    SELECT t.ruleset, t.position, t.value AS computed,
           CASE WHEN list_reduce(list_prepend(0, list_transform(t.heaps, lambda h: h // 2)),
                                 lambda a, b: xor(a, b)) = 0
                THEN 'loss' ELSE 'win' END AS claimed
    FROM tablebase AS t JOIN catalog AS c USING (ruleset)
    WHERE c.game = 'nim' AND c.params['variant'] = 'coin' AND c.params['play'] = 'normal'
)
SELECT ruleset, 'holds on ' || count(*) || ' positions' AS verdict,
       NULL AS position, NULL AS claimed, NULL AS computed
FROM checked GROUP BY ruleset HAVING count(*) FILTER (WHERE claimed <> computed) = 0
UNION ALL
SELECT ruleset, 'fails', position, claimed, computed FROM checked WHERE claimed <> computed
ORDER BY ruleset, position NULLS FIRST;
