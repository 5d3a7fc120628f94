-- Webhook attempts are counted when the request leaves (in the lease's transaction), and replays are kept.
-- webhook_replays: every replay of a delivery with its reason, note and time, so a replay's reason_tag
-- survives the delivery's later attempts.
CREATE TABLE `webhook_replays` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` integer NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`reason_tag` text NOT NULL,
	`note` text,
	`replayed_at` text NOT NULL,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `replays_delivery_idx` ON `webhook_replays` (`delivery_id`,`reason_tag`);--> statement-breakpoint
-- Deliveries leased when a pre-0010 process stopped had their in-flight attempt not yet counted (the old rule
-- counted at the outcome): count it now, with an attempt row without an outcome, as the new rule would have.
-- When the lease runs out the dispatcher marks it interrupted and sends again — or dead-letters at max_attempts.
INSERT INTO `webhook_attempts` (`delivery_id`, `attempt_no`, `started_at`, `duration_ms`) SELECT `id`, `attempts` + 1, `updated_at`, 0 FROM `webhook_deliveries` WHERE `status` = 'processing';--> statement-breakpoint
UPDATE `webhook_deliveries` SET `attempts` = `attempts` + 1, `last_attempt_at` = `updated_at` WHERE `status` = 'processing';--> statement-breakpoint
-- A replay's tag still on a delivery (not yet overwritten by a failure, nor cleared by a success) becomes its
-- first history row; the replay time is the row's last update (exact for a still queued replay).
INSERT INTO `webhook_replays` (`delivery_id`, `partner`, `mode`, `reason_tag`, `note`, `replayed_at`) SELECT `id`, `partner`, `mode`, `reason_tag`, NULL, `updated_at` FROM `webhook_deliveries` WHERE `reason_tag` IS NOT NULL AND `reason_tag` NOT IN ('http_error', 'timeout', 'connection_error', 'blocked_target') ORDER BY `id`;
