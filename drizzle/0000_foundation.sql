CREATE TABLE `request_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`method` text NOT NULL,
	`route` text NOT NULL,
	`status` integer NOT NULL,
	`latency_us` integer NOT NULL,
	`partner_key_id` text,
	`client_ip` text,
	`request_id` text NOT NULL,
	`error_code` text
);
--> statement-breakpoint
CREATE INDEX `request_log_key_at_idx` ON `request_log` (`partner_key_id`,`at`);--> statement-breakpoint
CREATE INDEX `request_log_at_idx` ON `request_log` (`at`);--> statement-breakpoint
CREATE TABLE `job_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`ok` integer,
	`error` text,
	`duration_ms` integer,
	`trigger` text DEFAULT 'schedule' NOT NULL
);
--> statement-breakpoint
CREATE INDEX `job_runs_name_started_idx` ON `job_runs` (`name`,`started_at`);--> statement-breakpoint
CREATE INDEX `job_runs_started_idx` ON `job_runs` (`started_at`);