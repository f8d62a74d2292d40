-- The Grundy value of a single heap of each size, for every built octal ruleset, and its
-- period if one shows: the smallest p with g(n + p) = g(n) from some heap n0 on, the
-- pattern then two repeats of it seen among the heaps the tablebase holds (over 12 heaps
-- at least): evidence within the range built, not a proof (CGSuite's classic output).
-- A heap that no position of the tablebase holds alone shows as '.' (`missing` counts
-- them: in Dawson's Kayles, which takes 2 at a time, an even start never leaves an odd
-- heap alone); start from a larger heap to see more. Grundy values are those of normal
-- play, also in misère rulesets (`play` says which), where they do not give the outcome.
-- Parameters: none.
-- Example: tablebase query grundy_sequence
-- Answer for 'octal' (Kayles from a heap of 10): 0 1 2 3 1 4 3 2 1 4 2, no period yet.
WITH single AS (  -- positions of one heap (or none): texts without a '-'
    SELECT ruleset, CAST(position AS INTEGER) AS heap, grundy
    FROM tablebase
    WHERE ruleset IN (SELECT ruleset FROM catalog WHERE game = 'octal') AND NOT contains(position, '-')
),
bounds AS (
    SELECT ruleset, max(heap) AS top, count(*) AS known FROM single GROUP BY ruleset
),
-- the largest heap below the top that no position holds alone: a period starts above it
gaps AS (
    SELECT b.ruleset, max(h.heap) AS last_gap
    FROM bounds AS b CROSS JOIN LATERAL range(0, b.top + 1) AS h(heap)
    ANTI JOIN single AS s ON s.ruleset = b.ruleset AND s.heap = h.heap
    GROUP BY b.ruleset
),
-- for each candidate period p: the last heap n where g(n + p) differs from g(n)
breaks AS (
    SELECT b.ruleset, p.period,
           max(a.heap) FILTER (WHERE a.grundy IS DISTINCT FROM c.grundy) AS last_break
    FROM bounds AS b
    CROSS JOIN LATERAL range(1, b.top // 2 + 1) AS p(period)
    JOIN single AS a ON a.ruleset = b.ruleset
    JOIN single AS c ON c.ruleset = b.ruleset AND c.heap = a.heap + p.period
    GROUP BY ALL
),
periods AS (
    SELECT k.ruleset, k.period, greatest(coalesce(k.last_break + 1, 0), coalesce(g.last_gap + 1, 0)) AS from_heap, b.top
    FROM breaks AS k JOIN bounds AS b USING (ruleset) LEFT JOIN gaps AS g USING (ruleset)
),
-- a period counts only if every heap from where it starts is known, and it shows the
-- pattern and then two repeats of it, over at least 12 heaps
shown AS (
    SELECT p.ruleset, p.period, p.from_heap
    FROM periods AS p JOIN single AS s ON s.ruleset = p.ruleset AND s.heap >= p.from_heap
    GROUP BY ALL
    HAVING count(*) = any_value(p.top) - p.from_heap + 1
       AND count(*) >= greatest(3 * p.period, 12)
),
best AS (
    SELECT ruleset, arg_min(period, (period, from_heap)) AS period, arg_min(from_heap, (period, from_heap)) AS from_heap
    FROM shown GROUP BY ruleset
)
SELECT b.ruleset,
       any_value(c.params['play']) AS play,
       b.top + 1 - b.known AS missing,
       string_agg(coalesce(s.grundy::VARCHAR, '.'), ' ' ORDER BY h.heap) AS grundy_by_heap,
       any_value(p.period) AS period,
       any_value(p.from_heap) AS period_from_heap
FROM bounds AS b
JOIN catalog AS c ON c.ruleset = b.ruleset
CROSS JOIN LATERAL range(0, b.top + 1) AS h(heap)
LEFT JOIN single AS s ON s.ruleset = b.ruleset AND s.heap = h.heap
LEFT JOIN best AS p ON p.ruleset = b.ruleset
GROUP BY b.ruleset, b.top, b.known
ORDER BY b.ruleset;
