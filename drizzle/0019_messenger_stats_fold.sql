CREATE TABLE `messenger_stats_fold` (
	`id` integer PRIMARY KEY NOT NULL,
	`ledger_id` integer NOT NULL,
	`folded_at` text NOT NULL
);
--> statement-breakpoint
-- Until now the ledger wrote the aggregates itself, in each row's transaction: every row is already counted.
INSERT INTO `messenger_stats_fold` (`id`, `ledger_id`, `folded_at`) VALUES (1, (SELECT coalesce(max(`id`), 0) FROM `messenger_ledger`), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
