-- A counter that every change to partner_keys bumps (from any connection or process, raw SQL included), so
-- the signature check can keep key rows in memory and re-read them only after a change.
CREATE TABLE `partner_keys_version` (
	`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1),
	`version` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `partner_keys_version` (`id`, `version`) VALUES (1, 0);
--> statement-breakpoint
CREATE TRIGGER `partner_keys_version_insert` AFTER INSERT ON `partner_keys` BEGIN
	UPDATE `partner_keys_version` SET `version` = `version` + 1 WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `partner_keys_version_update` AFTER UPDATE ON `partner_keys` BEGIN
	UPDATE `partner_keys_version` SET `version` = `version` + 1 WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `partner_keys_version_delete` AFTER DELETE ON `partner_keys` BEGIN
	UPDATE `partner_keys_version` SET `version` = `version` + 1 WHERE `id` = 1;
END;
