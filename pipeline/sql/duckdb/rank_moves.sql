-- Solving rank by rank, one rank's moves: those out of the positions with ids lo..hi (a
-- view: read where they are, the file's or the loaded table's row groups skipped by their
-- min/max), and child_lo, the lowest id they lead to (the ranks below whose results the
-- rank needs).
CREATE OR REPLACE TEMP VIEW moves_here AS
SELECT src::INTEGER AS src, dst::INTEGER AS dst
FROM moves
WHERE src BETWEEN getvariable('lo') AND getvariable('hi');

SET VARIABLE child_lo = (SELECT coalesce(min(dst), getvariable('lo')) FROM moves_here);
