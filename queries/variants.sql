-- Who wins each built variant of a game, and in how many plies: one row per ruleset, its
-- rules beside the defaults, the winner from the start with best play, the plies to the end,
-- and how many positions there are and how many are draws (neither side can force an end).
-- Parameters: game (a game name).
-- Example: tablebase query variants -p game=dobutsu
-- Answer: for dobutsu, 'dobutsu' (all rules at their defaults): the second player, in 77
-- plies to the position where the lion is caught (78 with the capture), 493,573,042 positions.
WITH known AS (
    SELECT CASE WHEN count(*) = 0 THEN error('variants: no built ruleset of game ' || $game) END AS ok
    FROM catalog WHERE game = $game
)
SELECT ruleset,
       coalesce(nullif(array_to_string(list_transform(list_filter(string_split(split_part(ruleset, ':', 2), ','),
                                                                  lambda p: p <> ''),
                                                      lambda p: replace(p, '=', ' = ')), ', '), ''),
                'the defaults') AS rules,
       CASE start_value WHEN 'win' THEN 'first player' WHEN 'loss' THEN 'second player'
            WHEN 'tie' THEN 'nobody (tie)' ELSE 'nobody (draw)' END AS winner,
       start_remoteness AS plies,
       positions,
       draws,
       round(100.0 * draws / positions, 2) AS draw_percent,
       max_remoteness AS longest
FROM catalog, known
WHERE game = $game AND known.ok IS NULL
ORDER BY positions DESC, ruleset;
