CREATE TABLE `messenger_versions` (
	`name` text PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `messenger_ledger` ADD `folded` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The fold's watermark becomes a flag per row (ids commit out of order on PostgreSQL): the rows the watermark
-- already counted are marked folded, so nothing is counted twice, before the watermark's table goes.
UPDATE `messenger_ledger` SET `folded` = 1 WHERE `id` <= coalesce((SELECT `ledger_id` FROM `messenger_stats_fold` WHERE `id` = 1), 0);--> statement-breakpoint
DROP TABLE `messenger_stats_fold`;--> statement-breakpoint
CREATE INDEX `messenger_ledger_unfolded_idx` ON `messenger_ledger` (`id`) WHERE folded = 0;
