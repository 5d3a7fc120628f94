CREATE TABLE `admin_audit` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`actor` text NOT NULL,
	`action` text NOT NULL,
	`target` text,
	`details` text,
	`request_id` text
);
--> statement-breakpoint
CREATE INDEX `admin_audit_at_idx` ON `admin_audit` (`at`);--> statement-breakpoint
CREATE TABLE `admin_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `admin_tokens_hash_idx` ON `admin_tokens` (`token_hash`);--> statement-breakpoint
CREATE TABLE `idempotency_records` (
	`key_id` text NOT NULL,
	`idempotency_key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`state` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` text NOT NULL,
	`locked_until` text,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`key_id`, `idempotency_key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_expires_idx` ON `idempotency_records` (`expires_at`);--> statement-breakpoint
CREATE TABLE `partner_keys` (
	`key_id` text PRIMARY KEY NOT NULL,
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`scopes` text NOT NULL,
	`allowed_ips` text DEFAULT '' NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`secret_ciphertext` text NOT NULL,
	`previous_secret_ciphertext` text,
	`previous_secret_valid_until` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`last_used_at` text,
	`disabled_reason` text
);
--> statement-breakpoint
CREATE INDEX `partner_keys_partner_idx` ON `partner_keys` (`partner`);--> statement-breakpoint
CREATE TABLE `partner_nonces` (
	`key_id` text NOT NULL,
	`nonce` text NOT NULL,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`key_id`, `nonce`)
);
--> statement-breakpoint
CREATE INDEX `partner_nonces_expires_idx` ON `partner_nonces` (`expires_at`);