-- Reachability on Spark, the walk's result: every position, whether a level reached it
-- (`seen`: id, at, every level's positions: reachable_level.sql), and at which level.
-- Views: positions, seen.
SELECT p.id, s.id IS NOT NULL AS seen, s.at
FROM positions AS p
LEFT JOIN seen AS s ON s.id = p.id
