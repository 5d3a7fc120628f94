-- The operators' player list with linked=true (GET /api/messenger/admin/games/user-profiles), in each of its orders:
-- partial indexes of the linked players only, walked to offset + limit, instead of walking every player and testing
-- each (3.1 ms at 10,000 players, 36 ms at 100,000 before). (PostgreSQL: drizzle/postgres/0018_players_linked_indexes.sql.)
CREATE INDEX `messenger_players_linked_points_idx` ON `messenger_players` (points_earned DESC,`telegram_user_id`) WHERE linked_user_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `messenger_players_linked_seen_idx` ON `messenger_players` (last_seen_at DESC,`telegram_user_id`) WHERE linked_user_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `messenger_players_linked_id_idx` ON `messenger_players` (`telegram_user_id`) WHERE linked_user_id IS NOT NULL;
