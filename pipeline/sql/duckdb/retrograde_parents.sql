-- Retrograde analysis, one level: every move from a position still open (as rev holds it)
-- into the `frontier` (id, value: the positions finished at the level before, with the
-- value their parents learn: a value code, or a Grundy value). Each parent comes once for
-- each child of the frontier it moves to, unaggregated: NumPy sorts and counts them faster
-- than a GROUP BY with a row per parent (measured 4x) and looks up whether the parent is
-- still open, which rev does not know.
SELECT unnest(r.parents) AS parent, f.value
FROM frontier AS f
JOIN rev AS r USING (id)
