-- Hand-edited after drizzle-kit generate: the copy selects only the columns the old table has (the generated
-- statement also selected the new ones, which fails), and the rebuild runs before the tables that reference it.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_status_incidents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`source` text DEFAULT 'automatic' NOT NULL,
	`started_at` text NOT NULL,
	`ended_at` text,
	`severity` text NOT NULL,
	`current_severity` text NOT NULL,
	`checks` text NOT NULL,
	`summary` text NOT NULL,
	`opened_snapshot_id` integer,
	`closed_snapshot_id` integer,
	`updated_at` text NOT NULL,
	`title` text,
	`state` text,
	`components` text,
	`created_by` text,
	`idempotency_key` text,
	`request_hash` text
);
--> statement-breakpoint
INSERT INTO `__new_status_incidents`("id", "started_at", "ended_at", "severity", "current_severity", "checks", "summary", "opened_snapshot_id", "closed_snapshot_id", "updated_at") SELECT "id", "started_at", "ended_at", "severity", "current_severity", "checks", "summary", "opened_snapshot_id", "closed_snapshot_id", "updated_at" FROM `status_incidents`;--> statement-breakpoint
DROP TABLE `status_incidents`;--> statement-breakpoint
ALTER TABLE `__new_status_incidents` RENAME TO `status_incidents`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `status_incidents_ended_idx` ON `status_incidents` (`ended_at`);--> statement-breakpoint
CREATE INDEX `status_incidents_started_idx` ON `status_incidents` (`started_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `status_incidents_idempotency_idx` ON `status_incidents` (`idempotency_key`);--> statement-breakpoint
CREATE TABLE `status_incident_updates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`incident_id` integer NOT NULL,
	`state` text NOT NULL,
	`message` text NOT NULL,
	`severity` text,
	`created_at` text NOT NULL,
	`created_by` text NOT NULL,
	`idempotency_key` text,
	`request_hash` text,
	FOREIGN KEY (`incident_id`) REFERENCES `status_incidents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `status_incident_updates_incident_idx` ON `status_incident_updates` (`incident_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `status_incident_updates_idempotency_idx` ON `status_incident_updates` (`incident_id`,`idempotency_key`);--> statement-breakpoint
CREATE TABLE `status_subscriber_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`subscriber_id` integer NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`lease_until` text,
	`lease_token` text,
	`last_error` text,
	`last_status_code` integer,
	`last_attempt_at` text,
	`delivered_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`subscriber_id`) REFERENCES `status_subscribers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `status_deliveries_due_idx` ON `status_subscriber_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `status_deliveries_subscriber_idx` ON `status_subscriber_deliveries` (`subscriber_id`,`id`);--> statement-breakpoint
CREATE TABLE `status_subscribers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`event_types` text NOT NULL,
	`secret_ciphertext` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `status_subscribers_url_idx` ON `status_subscribers` (`url`);
