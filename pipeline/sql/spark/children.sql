-- The moves grouped by their source, for reachability's levels on Spark
-- (reachable_level.sql): each position's distinct children. A level then reads a row per
-- position, not per move, and the engine keeps it (checkpointed) for the whole walk rather
-- than reading and shuffling the moves file at every level. View: transitions.
SELECT src AS id, collect_set(dst) AS dsts
FROM transitions
GROUP BY src
