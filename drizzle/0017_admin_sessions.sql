CREATE TABLE `admin_sessions` (
	`session_hash` text PRIMARY KEY NOT NULL,
	`csrf_hash` text NOT NULL,
	`admin_token_id` integer NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`last_seen_at` text,
	`revoked_at` text,
	`client_ip` text,
	`user_agent` text
);
--> statement-breakpoint
CREATE INDEX `admin_sessions_token_idx` ON `admin_sessions` (`admin_token_id`);--> statement-breakpoint
CREATE INDEX `admin_sessions_expires_idx` ON `admin_sessions` (`expires_at`);