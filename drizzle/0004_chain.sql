CREATE TABLE `chain_holder_growth` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`taken_at` text NOT NULL,
	`job_run_id` integer,
	`mint` text NOT NULL,
	`holder_snapshot_id` integer NOT NULL,
	`snapshot_taken_at` text NOT NULL,
	`holders` integer NOT NULL,
	`previous_holders` integer,
	`delta` integer
);
--> statement-breakpoint
CREATE INDEX `chain_holder_growth_mint_idx` ON `chain_holder_growth` (`mint`,`id`);--> statement-breakpoint
CREATE TABLE `chain_holder_snapshots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`taken_at` text NOT NULL,
	`job_run_id` integer,
	`mint` text NOT NULL,
	`accounts_scanned` integer NOT NULL,
	`holders` integer NOT NULL,
	`total_raw` text NOT NULL,
	`top1_raw` text NOT NULL,
	`top5_raw` text NOT NULL,
	`top10_raw` text NOT NULL,
	`top_accounts_json` text NOT NULL,
	`duration_ms` integer NOT NULL,
	`rpc_host` text NOT NULL,
	`method` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `chain_holder_snapshots_mint_idx` ON `chain_holder_snapshots` (`mint`,`id`);--> statement-breakpoint
CREATE TABLE `chain_mint_authority_snapshots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`taken_at` text NOT NULL,
	`job_run_id` integer,
	`mint` text NOT NULL,
	`decimals` integer NOT NULL,
	`supply_raw` text NOT NULL,
	`slot` integer,
	`mint_authority` text,
	`freeze_authority` text,
	`expected_mint_authority` text,
	`expected_freeze_authority` text,
	`expectation_configured` integer NOT NULL,
	`review_status` text NOT NULL,
	`expected_review_status` text,
	`mismatch` integer NOT NULL,
	`mismatch_fields` text NOT NULL,
	`rpc_host` text NOT NULL,
	`method` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `chain_mint_authority_snapshots_mint_idx` ON `chain_mint_authority_snapshots` (`mint`,`id`);--> statement-breakpoint
CREATE TABLE `chain_rpc_calls` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`host` text NOT NULL,
	`method` text NOT NULL,
	`outcome` text NOT NULL,
	`http_status` integer,
	`latency_ms` integer NOT NULL,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `chain_rpc_calls_at_idx` ON `chain_rpc_calls` (`at`);--> statement-breakpoint
CREATE TABLE `chain_sync_cursors` (
	`mint` text NOT NULL,
	`address` text NOT NULL,
	`last_signature` text NOT NULL,
	`last_slot` integer NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`mint`, `address`)
);
--> statement-breakpoint
CREATE TABLE `chain_sync_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`taken_at` text NOT NULL,
	`job_run_id` integer,
	`mint` text NOT NULL,
	`addresses` integer NOT NULL,
	`new_signatures` integer NOT NULL,
	`stored` integer NOT NULL,
	`already_stored` integer NOT NULL,
	`gap_detected` integer NOT NULL,
	`newest_signature` text,
	`newest_slot` integer,
	`duration_ms` integer NOT NULL,
	`rpc_host` text NOT NULL,
	`method` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `chain_sync_runs_mint_idx` ON `chain_sync_runs` (`mint`,`id`);--> statement-breakpoint
CREATE TABLE `chain_token_snapshots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`taken_at` text NOT NULL,
	`job_run_id` integer,
	`mint` text NOT NULL,
	`decimals` integer NOT NULL,
	`slot` integer,
	`supply_raw` text NOT NULL,
	`treasury_raw` text NOT NULL,
	`reserve_raw` text NOT NULL,
	`tracked_treasury_raw` text NOT NULL,
	`circulating_raw` text NOT NULL,
	`wallets_json` text NOT NULL,
	`rpc_host` text NOT NULL,
	`method` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `chain_token_snapshots_mint_idx` ON `chain_token_snapshots` (`mint`,`id`);--> statement-breakpoint
CREATE TABLE `chain_transactions` (
	`signature` text PRIMARY KEY NOT NULL,
	`mint` text NOT NULL,
	`slot` integer NOT NULL,
	`block_time` text,
	`status` text NOT NULL,
	`token_delta_raw` text NOT NULL,
	`amount_moved_raw` text NOT NULL,
	`found_via` text NOT NULL,
	`sync_run_id` integer,
	`synced_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `chain_transactions_mint_slot_idx` ON `chain_transactions` (`mint`,`slot`);--> statement-breakpoint
CREATE INDEX `chain_transactions_mint_time_idx` ON `chain_transactions` (`mint`,`block_time`);