CREATE TABLE `messenger_salutes_rewards` (
	`partner` text NOT NULL,
	`partner_user_id` integer NOT NULL,
	`reward_key` text NOT NULL,
	`telegram_user_id` integer NOT NULL,
	`amount` text NOT NULL,
	`salutes_ledger_entry_id` integer,
	`paid_at` text NOT NULL,
	PRIMARY KEY(`partner`, `partner_user_id`, `reward_key`)
);
--> statement-breakpoint
CREATE TABLE `messenger_seed_commitments` (
	`telegram_user_id` integer NOT NULL,
	`game_key` text NOT NULL,
	`server_seed` text NOT NULL,
	`server_seed_hash` text NOT NULL,
	`committed_at` text NOT NULL,
	PRIMARY KEY(`telegram_user_id`, `game_key`)
);
--> statement-breakpoint
ALTER TABLE `messenger_grids` ADD `committed_at` text;--> statement-breakpoint
ALTER TABLE `messenger_mission_enrollments` ADD `observed` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `messenger_missions` ADD `progress_source` text DEFAULT 'server' NOT NULL;--> statement-breakpoint
ALTER TABLE `messenger_seeds` ADD `committed_at` text;--> statement-breakpoint
-- Seeds and grids made before commitments were recorded were committed when they were made.
UPDATE `messenger_seeds` SET `committed_at` = `created_at` WHERE `committed_at` IS NULL;--> statement-breakpoint
UPDATE `messenger_grids` SET `committed_at` = `created_at` WHERE `committed_at` IS NULL;--> statement-breakpoint
-- Missions on event types the server does not observe were counted by the mini-app: they stay so, now declared.
UPDATE `messenger_missions` SET `progress_source` = 'self_reported' WHERE `event_type` NOT IN ('spin_wheel.play', 'recon_grid.start', 'recon_grid.reveal', 'recon_grid.complete', 'recon_grid.purchase', 'items.purchase', 'promo.claim', 'wallet.proof');--> statement-breakpoint
-- Enrollments keep the progress they have; server-observed events count on from there.
UPDATE `messenger_mission_enrollments` SET `observed` = `progress`;--> statement-breakpoint
-- Salutes rewards paid before are counted: from now on a reward's salutes reach a partner user once.
INSERT INTO `messenger_salutes_rewards` (`partner`, `partner_user_id`, `reward_key`, `telegram_user_id`, `amount`, `salutes_ledger_entry_id`, `paid_at`)
SELECT s.`partner`, s.`user_id`,
  CASE l.`action` WHEN 'promo.claim' THEN 'promo:' || json_extract(l.`result`, '$.promo.code') ELSE 'mission:' || json_extract(l.`result`, '$.mission_key') END,
  l.`telegram_user_id`, json_extract(l.`result`, '$.salutes.amount'), s.`id`, l.`created_at`
FROM `messenger_ledger` l JOIN `salutes_ledger` s ON s.`id` = json_extract(l.`result`, '$.salutes.salutes_ledger_entry_id')
WHERE l.`action` IN ('promo.claim', 'mission.reward') AND json_extract(l.`result`, '$.salutes.paid') = 1
ORDER BY l.`id`
ON CONFLICT DO NOTHING;
