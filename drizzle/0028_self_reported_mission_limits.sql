-- Self-reported missions live under tighter limits (src/messenger/games/mission-sources.ts, SELF_REPORTED_LIMITS):
-- daily_cap at most 20, per_minute_cap at most 5, a reward of at most 5 free spins, 20 missiles and 1,000 points,
-- and no salutes. Missions declared self_reported by migration 0021 kept the caps and rewards they had; they are
-- brought within the limits here, so no mission pays more on the client's word than a new one may.
UPDATE `messenger_missions` SET
  `daily_cap` = min(`daily_cap`, 20),
  `per_minute_cap` = min(`per_minute_cap`, 5),
  `reward_free_spins` = min(`reward_free_spins`, 5),
  `reward_missiles` = min(`reward_missiles`, 20),
  `reward_points` = min(`reward_points`, 1000),
  `reward_salutes` = NULL,
  `revision` = `revision` + 1
WHERE `progress_source` = 'self_reported' AND (
  `daily_cap` > 20 OR `per_minute_cap` > 5 OR `reward_free_spins` > 5 OR `reward_missiles` > 20 OR `reward_points` > 1000
  OR (`reward_salutes` IS NOT NULL AND CAST(`reward_salutes` AS REAL) <> 0)
);
