-- The moves grouped by their child, for the retrograde analysis's levels on Spark
-- (solve_level.sql, solve_tie_level.sql, grundy_level.sql): each position's parents, one
-- entry a move (a parent twice where two moves lead from it to the same child). A level
-- then reads a row per position, not per move, and the engine keeps it (checkpointed) for
-- the whole solve rather than reading and shuffling the moves file at every level.
-- View: transitions.
SELECT dst AS id, collect_list(src) AS srcs
FROM transitions
GROUP BY dst
