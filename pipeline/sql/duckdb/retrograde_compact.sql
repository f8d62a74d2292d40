-- Retrograde analysis: rewrite rev with only its live rows. `live` (keep BOOLEAN) holds
-- one row for each row of rev, in order (NumPy decides from the positions' state which
-- rows' positions are still to pass to their parents): a POSITIONAL JOIN pairs them
-- without a hash join, and the rows stay in id order.
CREATE OR REPLACE TABLE rev_live AS
SELECT r.id, r.parents
FROM rev AS r POSITIONAL JOIN live AS l
WHERE l.keep;

DROP TABLE rev;

ALTER TABLE rev_live RENAME TO rev;
