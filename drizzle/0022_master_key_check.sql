CREATE TABLE `master_key_check` (
	`id` integer PRIMARY KEY NOT NULL,
	`fingerprint` text NOT NULL,
	`check_value` text NOT NULL,
	`created_at` text NOT NULL
);
