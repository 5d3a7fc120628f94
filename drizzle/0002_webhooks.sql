CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`public_id` text NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`event_type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_public_id_idx` ON `events` (`public_id`);--> statement-breakpoint
CREATE INDEX `events_partner_created_idx` ON `events` (`partner`,`mode`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` integer NOT NULL,
	`attempt_no` integer NOT NULL,
	`started_at` text NOT NULL,
	`duration_ms` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`reason_tag` text,
	`response_excerpt` text,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` integer NOT NULL,
	`webhook_id` integer NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`lease_until` text,
	`lease_token` text,
	`reason_tag` text,
	`last_error` text,
	`last_status_code` integer,
	`last_attempt_at` text,
	`delivered_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `deliveries_partner_idx` ON `webhook_deliveries` (`partner`,`mode`,`id`);--> statement-breakpoint
CREATE INDEX `deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`status`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`event_type` text NOT NULL,
	`target_url` text NOT NULL,
	`description` text,
	`secret_ciphertext` text NOT NULL,
	`previous_secret_ciphertext` text,
	`previous_secret_valid_until` text,
	`is_active` integer DEFAULT true NOT NULL,
	`disabled_reason` text,
	`failing_since` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text
);
--> statement-breakpoint
CREATE INDEX `webhooks_fanout_idx` ON `webhooks` (`partner`,`mode`,`event_type`,`is_active`);