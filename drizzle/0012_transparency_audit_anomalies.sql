CREATE TABLE `audit_examined` (
	`signature` text PRIMARY KEY NOT NULL,
	`run_id` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_rows` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` integer NOT NULL,
	`kind` text NOT NULL,
	`signature` text NOT NULL,
	`slot` integer,
	`block_time` text,
	`delta_raw` text NOT NULL,
	`abs_key` text NOT NULL,
	`types` text DEFAULT '' NOT NULL,
	`severity_rank` integer DEFAULT 0 NOT NULL,
	`declaration_id` integer,
	`detail` text
);
--> statement-breakpoint
CREATE INDEX `audit_rows_run_idx` ON `audit_rows` (`run_id`);--> statement-breakpoint
CREATE INDEX `audit_rows_top_idx` ON `audit_rows` (`run_id`,`severity_rank`,`abs_key`) WHERE severity_rank > 0;--> statement-breakpoint
CREATE TABLE `audit_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`label` text NOT NULL,
	`day` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`job_run_id` integer,
	`mint` text NOT NULL,
	`decimals` integer NOT NULL,
	`is_complete` integer DEFAULT 0 NOT NULL,
	`error` text,
	`rows_total` integer DEFAULT 0 NOT NULL,
	`signatures_with_anomalies` integer DEFAULT 0 NOT NULL,
	`overall` text,
	`severity_counts` text DEFAULT '{}' NOT NULL,
	`type_counts` text DEFAULT '{}' NOT NULL,
	`max_abs_delta_raw` text DEFAULT '0' NOT NULL,
	`thresholds` text NOT NULL,
	`transactions_examined` integer DEFAULT 0 NOT NULL,
	`last_token_snapshot_id` integer DEFAULT 0 NOT NULL,
	`last_authority_snapshot_id` integer DEFAULT 0 NOT NULL,
	`last_sync_run_id` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_runs_complete_idx` ON `audit_runs` (`is_complete`,`id`);--> statement-breakpoint
CREATE INDEX `audit_runs_day_idx` ON `audit_runs` (`day`,`is_complete`,`id`);--> statement-breakpoint
CREATE TABLE `audit_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`version` integer NOT NULL,
	`changed_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_threshold_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`changed_at` text NOT NULL,
	`parameter` text NOT NULL,
	`previous_value` text NOT NULL,
	`new_value` text NOT NULL,
	`owner` text NOT NULL,
	`reason` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_thresholds` (
	`parameter` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_triage` (
	`signature` text PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`owner` text NOT NULL,
	`eta_utc` text,
	`note` text,
	`updated_at` text NOT NULL,
	`updated_by` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_triage_status_idx` ON `audit_triage` (`status`,`signature`);--> statement-breakpoint
CREATE TABLE `declared_movements` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`direction` text NOT NULL,
	`amount_raw` text NOT NULL,
	`decimals` integer NOT NULL,
	`counterparty` text,
	`signature` text,
	`window_start` text NOT NULL,
	`window_end` text NOT NULL,
	`max_transactions` integer NOT NULL,
	`reason` text NOT NULL,
	`created_at` text NOT NULL,
	`created_by` text NOT NULL,
	`retracted_at` text,
	`retracted_by` text,
	`retract_reason` text
);
--> statement-breakpoint
CREATE INDEX `declared_movements_active_idx` ON `declared_movements` (`retracted_at`,`id`);