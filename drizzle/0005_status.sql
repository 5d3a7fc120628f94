CREATE TABLE `status_incidents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`started_at` text NOT NULL,
	`ended_at` text,
	`severity` text NOT NULL,
	`current_severity` text NOT NULL,
	`checks` text NOT NULL,
	`summary` text NOT NULL,
	`opened_snapshot_id` integer NOT NULL,
	`closed_snapshot_id` integer,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `status_incidents_ended_idx` ON `status_incidents` (`ended_at`);--> statement-breakpoint
CREATE INDEX `status_incidents_started_idx` ON `status_incidents` (`started_at`);--> statement-breakpoint
CREATE TABLE `status_maintenance_windows` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`starts_at` text NOT NULL,
	`ends_at` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `status_maintenance_starts_idx` ON `status_maintenance_windows` (`starts_at`,`ends_at`);--> statement-breakpoint
CREATE TABLE `status_snapshots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`generated_at` text NOT NULL,
	`overall` text NOT NULL,
	`degraded` text NOT NULL,
	`checks` text NOT NULL,
	`policy_version` text NOT NULL,
	`in_maintenance` integer DEFAULT false NOT NULL,
	`job_run_id` integer
);
--> statement-breakpoint
CREATE INDEX `status_snapshots_at_idx` ON `status_snapshots` (`generated_at`);