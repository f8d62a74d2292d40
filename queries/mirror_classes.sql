-- How many positions a ruleset has when each is identified with its mirror image (the
-- board's columns swapped, left for right), by value: the way Dōbutsu shōgi's published
-- counts are made (246,803,167 positions). For games whose positions are boards written row
-- by row, rows joined by '/' (dobutsu, connect, tictactoe): a row read backwards is the row
-- mirrored, whatever follows the board after a space (whose turn, the hands) is kept.
-- A class is a position and its mirror image, or a position that is its own mirror image
-- (`symmetric`); `alone` counts positions whose mirror image is not a position of the
-- ruleset, and `values_differ` classes whose two positions have different values (both 0
-- where the rules treat both sides of the board alike).
-- Parameters: ruleset (a ruleset id).
-- Example: tablebase query mirror_classes -p ruleset=dobutsu
-- Answer: one row per value and one for all: for dobutsu, all 493,573,042 positions in
-- 246,803,167 classes, 33,292 of them symmetric.
WITH boards AS (
    SELECT position,
           value,
           array_to_string(list_transform(string_split(split_part(position, ' ', 1), '/'), lambda r: reverse(r)), '/')
               || substr(position, length(split_part(position, ' ', 1)) + 1) AS mirror
    FROM tablebase
    WHERE ruleset = $ruleset
), classes AS (
    SELECT least(position, mirror) AS class,
           count(*) AS members,
           bool_or(position = mirror) AS own_mirror,
           min(value) AS value,
           min(value) <> max(value) AS values_differ
    FROM boards
    GROUP BY class
), known AS (
    SELECT CASE WHEN count(*) = 0 THEN error('mirror_classes: no built ruleset ' || $ruleset) END AS ok
    FROM catalog WHERE ruleset = $ruleset
)
SELECT coalesce(value, 'all') AS value,
       sum(members) AS positions,
       count(*) AS classes,
       count(*) FILTER (WHERE own_mirror) AS symmetric,
       count(*) FILTER (WHERE members = 1 AND NOT own_mirror) AS alone,
       count(*) FILTER (WHERE values_differ) AS values_differ
FROM classes, known
WHERE known.ok IS NULL
GROUP BY ROLLUP (value)
ORDER BY value IS NULL, value;
