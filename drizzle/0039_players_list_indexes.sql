-- The operators' player list (GET /api/messenger/admin/games/user-profiles): sort=last_seen walks an index newest
-- first to offset + limit instead of sorting every player, and linked=true/false and their capped count read the
-- linked_user_id index instead of every row. (PostgreSQL: drizzle/postgres/0015_players_list_indexes.sql.)
CREATE INDEX `messenger_players_seen_idx` ON `messenger_players` (last_seen_at DESC,`telegram_user_id`);--> statement-breakpoint
CREATE INDEX `messenger_players_linked_idx` ON `messenger_players` (`linked_user_id`);