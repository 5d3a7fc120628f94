-- An owner's users of one status, newest first (GET /api/partner/users?status=…, /user-lookup): a status few users
-- hold is found down this index instead of walking all of the owner's users. (SQLite:
-- drizzle/0040_partner_users_status_index.sql.)
CREATE INDEX "partner_users_status_idx" ON "partner_users" ("partner", "mode", "status", "id");
