-- Grundy values, setup. Needs solve_setup.sql's rev table.
-- A position's Grundy value is the mex of its children's, so it is known once every
-- child's is: positions are peeled from those without moves (height 0) upwards. Each
-- level pushes the values just computed to their parents, which collect them in a
-- bitmask (bit v set: some child has value v); a parent whose last child arrived takes
-- the lowest clear bit. What is never peeled can reach a cycle and keeps NULL.
-- Variable: positions (Parquet path). Sets variable width: mask bits, more than any
-- Grundy value can reach (a value never exceeds its position's number of moves).
SET VARIABLE width = (SELECT max(moves) + 2 FROM read_parquet(getvariable('positions')));

-- gpending: children without a value yet; mask: the values of those with one (NULL
-- until the first arrives); height: the longest line of play to a position without moves.
CREATE TEMP TABLE gst AS
SELECT id::INTEGER AS id,
       moves AS gpending,
       NULL::BIT AS mask,
       CASE WHEN moves = 0 THEN 0 END::INTEGER AS grundy,
       CASE WHEN moves = 0 THEN 0 END::INTEGER AS height
FROM read_parquet(getvariable('positions'));
