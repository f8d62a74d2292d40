-- Retrograde analysis (pipeline/engines/retrograde.py), setup: the reverse adjacency, in
-- the solver's own database (in memory for a small graph, a scratch file for a large one).
-- One row per position that a move from a position still open leads to, its `parents`
-- (those positions, as indexes 0..n-1 in the positions file's order) as one LIST: a level
-- joins its frontier to the ids alone, and DuckDB decodes only the lists of the rows that
-- match. Rows are inserted bucket by bucket in id order (NumPy sorts each bucket).
CREATE OR REPLACE TABLE rev (id INTEGER, parents INTEGER[]);
