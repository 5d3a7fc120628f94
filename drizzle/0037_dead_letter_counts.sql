-- Each owner's dead letters counted as they change, not per read (issue 72): a partner's delivery health and /metrics
-- read one row per owner where they counted every dead letter (50,000 for one partner in bench scale's 10M database).
-- Kept by triggers, so every writer keeps it right — the dispatcher, a replay, the prune, a sandbox reset, raw SQL;
-- counted once here from the deliveries so far. (PostgreSQL: drizzle/postgres/0013_dead_letter_counts.sql.)
CREATE TABLE `webhook_dead_letter_counts` (
	`partner` text NOT NULL,
	`mode` text NOT NULL,
	`n` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`partner`, `mode`)
);
--> statement-breakpoint
INSERT INTO `webhook_dead_letter_counts` (`partner`, `mode`, `n`)
SELECT `partner`, `mode`, count(*) FROM `webhook_deliveries` WHERE `status` = 'dead_letter' GROUP BY `partner`, `mode`;
--> statement-breakpoint
CREATE TRIGGER `webhook_dead_letters_insert` AFTER INSERT ON `webhook_deliveries` WHEN NEW.`status` = 'dead_letter' BEGIN
	INSERT OR IGNORE INTO `webhook_dead_letter_counts` (`partner`, `mode`, `n`) VALUES (NEW.`partner`, NEW.`mode`, 0);
	UPDATE `webhook_dead_letter_counts` SET `n` = `n` + 1 WHERE `partner` = NEW.`partner` AND `mode` = NEW.`mode`;
END;
--> statement-breakpoint
CREATE TRIGGER `webhook_dead_letters_update` AFTER UPDATE OF `status` ON `webhook_deliveries`
WHEN (OLD.`status` = 'dead_letter') <> (NEW.`status` = 'dead_letter') BEGIN
	INSERT OR IGNORE INTO `webhook_dead_letter_counts` (`partner`, `mode`, `n`) VALUES (NEW.`partner`, NEW.`mode`, 0);
	UPDATE `webhook_dead_letter_counts` SET `n` = `n` + (CASE WHEN NEW.`status` = 'dead_letter' THEN 1 ELSE -1 END)
	WHERE `partner` = NEW.`partner` AND `mode` = NEW.`mode`;
END;
--> statement-breakpoint
CREATE TRIGGER `webhook_dead_letters_delete` AFTER DELETE ON `webhook_deliveries` WHEN OLD.`status` = 'dead_letter' BEGIN
	UPDATE `webhook_dead_letter_counts` SET `n` = `n` - 1 WHERE `partner` = OLD.`partner` AND `mode` = OLD.`mode`;
END;
