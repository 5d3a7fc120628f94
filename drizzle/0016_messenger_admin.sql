CREATE TABLE `messenger_audience_groups` (
	`group_key` text PRIMARY KEY NOT NULL,
	`title` text NOT NULL,
	`rule` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `messenger_catalog_campaigns` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`game_key` text NOT NULL,
	`audience_group` text NOT NULL,
	`title` text NOT NULL,
	`starts_at` text NOT NULL,
	`ends_at` text,
	`enabled` integer DEFAULT 1 NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `messenger_catalog_campaigns_game_idx` ON `messenger_catalog_campaigns` (`game_key`,`starts_at`);--> statement-breakpoint
CREATE TABLE `messenger_daily_players` (
	`day` text NOT NULL,
	`game_key` text NOT NULL,
	`telegram_user_id` integer NOT NULL,
	`entries` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`day`, `game_key`, `telegram_user_id`)
);
--> statement-breakpoint
CREATE INDEX `messenger_daily_players_player_idx` ON `messenger_daily_players` (`telegram_user_id`,`day`);--> statement-breakpoint
CREATE TABLE `messenger_daily_stats` (
	`day` text NOT NULL,
	`action` text NOT NULL,
	`game_key` text NOT NULL,
	`entries` integer DEFAULT 0 NOT NULL,
	`free_spins_granted` integer DEFAULT 0 NOT NULL,
	`free_spins_spent` integer DEFAULT 0 NOT NULL,
	`missiles_granted` integer DEFAULT 0 NOT NULL,
	`missiles_spent` integer DEFAULT 0 NOT NULL,
	`points_granted` integer DEFAULT 0 NOT NULL,
	`points_spent` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`day`, `action`, `game_key`)
);
--> statement-breakpoint
CREATE TABLE `messenger_wheel_campaigns` (
	`campaign_key` text PRIMARY KEY NOT NULL,
	`title` text NOT NULL,
	`audience_group` text NOT NULL,
	`starts_at` text NOT NULL,
	`ends_at` text,
	`cooldown_seconds` integer NOT NULL,
	`segments` text NOT NULL,
	`enabled` integer DEFAULT 1 NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `messenger_missions` ADD `revision` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `messenger_missions` ADD `updated_at` text;--> statement-breakpoint
CREATE INDEX `messenger_mission_enrollments_mission_idx` ON `messenger_mission_enrollments` (`mission_key`,`completed_at`);--> statement-breakpoint
CREATE INDEX `messenger_mission_events_mission_idx` ON `messenger_mission_events` (`mission_key`,`created_at`);--> statement-breakpoint
CREATE INDEX `messenger_updates_received_idx` ON `messenger_updates` (`received_at`);--> statement-breakpoint
-- Backfill the aggregates from the game ledger written before they existed (hand-written; drizzle-kit makes only DDL).
INSERT INTO `messenger_daily_stats` (`day`, `action`, `game_key`, `entries`, `free_spins_granted`, `free_spins_spent`, `missiles_granted`, `missiles_spent`, `points_granted`, `points_spent`)
SELECT substr(`created_at`, 1, 10), `action`, coalesce(`game_key`, ''), count(*),
  sum(CASE WHEN `free_spin_delta` > 0 THEN `free_spin_delta` ELSE 0 END), sum(CASE WHEN `free_spin_delta` < 0 THEN -`free_spin_delta` ELSE 0 END),
  sum(CASE WHEN `missile_delta` > 0 THEN `missile_delta` ELSE 0 END), sum(CASE WHEN `missile_delta` < 0 THEN -`missile_delta` ELSE 0 END),
  sum(CASE WHEN `points_delta` > 0 THEN `points_delta` ELSE 0 END), sum(CASE WHEN `points_delta` < 0 THEN -`points_delta` ELSE 0 END)
FROM `messenger_ledger` GROUP BY 1, 2, 3;
--> statement-breakpoint
INSERT INTO `messenger_daily_players` (`day`, `game_key`, `telegram_user_id`, `entries`)
SELECT substr(`created_at`, 1, 10), `game_key`, `telegram_user_id`, count(*) FROM `messenger_ledger` WHERE `game_key` IS NOT NULL GROUP BY 1, 2, 3;
--> statement-breakpoint
INSERT INTO `messenger_daily_players` (`day`, `game_key`, `telegram_user_id`, `entries`)
SELECT substr(`created_at`, 1, 10), '', `telegram_user_id`, count(*) FROM `messenger_ledger` GROUP BY 1, 3;
