-- Solving rank by rank, one rank of a game that is not impartial (no Grundy value, no
-- height): rank_level.sql without them, which would cost as much again as the values.
-- Variables: lo, hi, child_lo, and pipeline/core/values.py's (band, value_names). Winning
-- moves: as rank_level.sql's.
CREATE OR REPLACE TEMP TABLE rank_result AS
SELECT id::INTEGER AS id, terminal_score(terminal) AS score, NULL::INTEGER AS grundy, NULL::INTEGER AS height,
       0 AS winning_moves
FROM pos
WHERE id BETWEEN getvariable('lo') AND getvariable('hi') AND moves = 0
UNION ALL
SELECT m.src, parent_score(max(c.score)), NULL, NULL,
       count(*) FILTER (WHERE c.score >= 2 * getvariable('band'))::INTEGER
FROM moves_here AS m
JOIN children AS c ON c.id = m.dst AND c.id >= getvariable('child_lo')
GROUP BY m.src
ORDER BY 1;  -- in id order (ids are numbered rank by rank): the solution needs no sort
