-- Solving rank by rank, one rank, on Spark: the results of the positions with ids
-- :lo..:hi, whose children are all in `res` (the ranks below). As sql/duckdb/rank_level.sql
-- (the packed score, pipeline/core/values.py's three bands of :band), but returned as rows to
-- append, Spark having no INSERT into a view. Views: positions, transitions, res.
-- Parameters: lo, hi, band, win, tie, impartial, and the words win_word, tie_word.
-- Winning moves: the children lost (scoring 2 * :band or more), 0 without moves.
SELECT id,
       CASE terminal WHEN :win_word THEN 0
                     WHEN :tie_word THEN 2 * :band - 1
                     ELSE 3 * :band - 1 END AS score,
       CASE WHEN :impartial THEN 0 END AS grundy,
       CASE WHEN :impartial THEN 0 END AS height,
       0 AS winning_moves
FROM positions
WHERE id BETWEEN :lo AND :hi AND moves = 0
UNION ALL
SELECT src,
       CASE WHEN best >= 2 * :band THEN :band - best % :band      -- a lost child in r: won in r + 1
            WHEN best >= :band THEN best - 1                       -- a tied child: tied in r + 1
            ELSE 3 * :band - 2 - best END,                         -- all won: lost in r + 1
       CASE WHEN :impartial THEN array_min(array_except(sequence(0, size(seen)), seen)) END,  -- mex
       CASE WHEN :impartial THEN height + 1 END,
       winning
FROM (
    SELECT m.src, max(c.score) AS best, collect_set(c.grundy) AS seen, max(c.height) AS height,
           CAST(count_if(c.score >= 2 * :band) AS INT) AS winning
    FROM transitions AS m
    JOIN res AS c ON c.id = m.dst
    WHERE m.src BETWEEN :lo AND :hi
    GROUP BY m.src
)
