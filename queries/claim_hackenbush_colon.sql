-- Seed 004's colon principle: a tree's Grundy value is the XOR, over the branches at its
-- root, of 1 + the value of the tree standing on the branch, applied at every node from
-- the leaves down. Put to the test on every position (every tree left after cuts) of
-- every hackenbush ruleset in the catalog, against the brute-force Grundy values.
-- Parameters: none.
-- Example: tablebase query claim_hackenbush_colon
-- Answer: per ruleset, 'holds on N positions', or one 'fails' row per counterexample
-- with the position, the value the principle gives and the brute-force value.
WITH RECURSIVE
trees AS (
    SELECT t.ruleset, t.position, t.grundy, t.edges, t.parents
    FROM tablebase AS t JOIN catalog AS c USING (ruleset)
    WHERE c.game = 'hackenbush'
),
edge AS (
    SELECT DISTINCT ruleset, unnest(edges) AS node, unnest(parents) AS parent FROM trees
),
depth(ruleset, node, d) AS (
    SELECT DISTINCT ruleset, 1, 0 FROM trees
    UNION ALL
    SELECT e.ruleset, e.node, p.d + 1
    FROM depth AS p JOIN edge AS e ON e.ruleset = p.ruleset AND e.parent = p.node
),
shape AS (
    -- per ruleset: the non-root nodes deepest first, each node's parent, the largest node
    SELECT d.ruleset,
           coalesce(list(d.node ORDER BY d.d DESC, d.node) FILTER (WHERE d.node <> 1), []) AS deepest_first,
           map_from_entries(coalesce(list({'key': e.node, 'value': e.parent}) FILTER (WHERE e.node IS NOT NULL), []))
               AS parent_of,
           max(d.node) AS top
    FROM depth AS d LEFT JOIN edge AS e USING (ruleset, node)
    GROUP BY d.ruleset
),
checked AS (
    -- value[v] for every node v, the deepest first: each present node adds 1 + its value
    -- to its parent's by XOR; the tree's value is the root's
    SELECT t.ruleset, t.position, t.grundy AS computed,
           list_reduce(
               list_filter(s.deepest_first, lambda v: list_contains(t.edges, v)),
               lambda value, v: list_transform(value, lambda x, i:
                   CASE WHEN i - 1 = s.parent_of[v] THEN xor(x, 1 + value[v + 1]) ELSE x END),
               list_transform(range(s.top + 1), lambda i: 0)
           )[2] AS claimed
    FROM trees AS t JOIN shape AS s USING (ruleset)
)
SELECT ruleset, 'holds on ' || count(*) || ' positions' AS verdict,
       NULL AS position, NULL AS claimed, NULL AS computed
FROM checked GROUP BY ruleset HAVING count(*) FILTER (WHERE claimed IS DISTINCT FROM computed) = 0
UNION ALL
SELECT ruleset, 'fails', position, claimed, computed
FROM checked WHERE claimed IS DISTINCT FROM computed
ORDER BY ruleset, position NULLS FIRST;
