-- The SALUTES_DECIMALS the salutes amounts were written with (src/salutes/tables.ts, salutesSettings): a start
-- with another setting is refused rather than rescaling every balance.
CREATE TABLE `salutes_settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`decimals` integer NOT NULL,
	`recorded_at` text NOT NULL
);
