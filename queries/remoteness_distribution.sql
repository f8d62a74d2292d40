-- How many positions of a ruleset are won, lost, tied or drawn at each remoteness (plies to the
-- end under best play), and how many of them can arise in play from the start.
-- Parameters: ruleset (a ruleset id).
-- Example: tablebase query remoteness_distribution -p ruleset=chopsticks
-- Answer: one row per (value, remoteness); draws have no remoteness.
SELECT value, remoteness, count(*) AS positions, count(*) FILTER (WHERE reachable) AS reachable
FROM tablebase
WHERE ruleset = $ruleset
GROUP BY value, remoteness
ORDER BY value, remoteness NULLS LAST;
