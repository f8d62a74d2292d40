-- One breadth-first level: mark the unseen children of the `frontier` (id) and return them.
UPDATE reach SET seen = true
FROM (SELECT DISTINCT unnest(f.children) AS id FROM frontier JOIN fwd AS f USING (id)) AS c
WHERE reach.id = c.id AND NOT reach.seen
RETURNING reach.id
