ALTER TABLE `job_runs` ADD `instance_id` text;--> statement-breakpoint
-- attempt_no becomes the delivery's request number across replays (a replay used to start again at 1): the rows
-- written before are renumbered in the order they were made, so the unique index below can hold.
UPDATE `webhook_attempts` SET `attempt_no` = (SELECT count(*) FROM `webhook_attempts` AS `a` WHERE `a`.`delivery_id` = `webhook_attempts`.`delivery_id` AND `a`.`id` <= `webhook_attempts`.`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `attempts_delivery_no_idx` ON `webhook_attempts` (`delivery_id`,`attempt_no`);
