-- How the start's value changes as one parameter varies, for each setting of the other
-- parameters among the built rulesets of a game (the table seed 000 invites its readers to
-- explore by editing code). Each cell reads value:winner, winner being the first or second
-- player, or tie, or draw.
-- Parameters: game (a game name), parameter (the parameter that varies, e.g. fingers).
-- Example: tablebase query start_by_parameter -p game=chopsticks -p parameter=fingers
-- Answer: one row per setting of the other parameters, e.g. for chopsticks and fingers,
-- 'hands=2 overflow=cutoff …' with '2:first 3:first 4:second 5:second …'.
WITH rulesets AS (
    SELECT ruleset, params[$parameter] AS varied,
           CASE start_value WHEN 'win' THEN 'first' WHEN 'loss' THEN 'second' ELSE start_value END AS winner,
           array_to_string(
               list_transform(list_filter(map_entries(params), lambda e: e.key <> $parameter),
                              lambda e: e.key || '=' || e.value),
               ' ') AS setting
    FROM catalog
    WHERE game = $game
), known AS (
    SELECT CASE WHEN count(*) FILTER (WHERE varied IS NOT NULL) = 0
                THEN error('start_by_parameter: no built ' || $game || ' ruleset has a parameter ' || $parameter)
           END AS ok
    FROM rulesets
)
SELECT setting,
       count(*) AS rulesets,
       string_agg(varied || ':' || winner, ' ' ORDER BY try_cast(varied AS INTEGER), varied) AS start_by_value
FROM rulesets, known
WHERE known.ok IS NULL
GROUP BY setting
ORDER BY setting;
