-- Grundy values, setup. Needs solve_setup.sql's tables (rev, and st for its order).
-- A position's Grundy value is the mex of its children's, so it can be computed once
-- every child has one: positions are peeled from the positions without moves (height 0)
-- upwards, each level computing the positions whose last child was computed on the
-- level before. What is never peeled can reach a cycle and keeps NULL.

-- The smallest non-negative integer not in the list.
CREATE OR REPLACE TEMP MACRO mex(values_) AS coalesce(
    list_position(list_transform(list_sort(list_distinct(values_)), lambda v, i: v = i - 1), false) - 1,
    len(list_distinct(values_))
);

CREATE TEMP TABLE fwd AS
SELECT src::INTEGER AS id, list(dst::INTEGER) AS children
FROM read_parquet(getvariable('transitions'))
GROUP BY src;

-- gpending: children without a Grundy value yet; height: the longest path to a
-- position without moves (the level it was computed on).
CREATE TEMP TABLE gst AS
SELECT id::INTEGER AS id,
       moves AS gpending,
       CASE WHEN moves = 0 THEN 0 END::INTEGER AS grundy,
       CASE WHEN moves = 0 THEN 0 END::INTEGER AS height
FROM read_parquet(getvariable('positions'));
