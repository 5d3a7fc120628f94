CREATE TABLE `job_leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`until_ms` integer NOT NULL,
	`acquired_at_ms` integer NOT NULL
);
