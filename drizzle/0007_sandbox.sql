CREATE TABLE `sandbox_fixtures` (
	`partner` text PRIMARY KEY NOT NULL,
	`profile` text NOT NULL,
	`seed_key_id` text NOT NULL,
	`plan_digest` text NOT NULL,
	`user_ids` text NOT NULL,
	`seeded_at` text NOT NULL,
	`reset_count` integer DEFAULT 0 NOT NULL
);
