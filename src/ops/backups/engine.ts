import type { Dialect } from "../../db/port";
import { AppError } from "../../http/errors/errors";

// Which backups apply on which engine (docs/design.md §8a: SQLite-only mechanisms live behind small named functions with
// their PostgreSQL meaning stated). On SQLite, Herald's own: Litestream's continuous replica and the on-demand
// VACUUM INTO copies in <db dir>/backups. On PostgreSQL there is no file to copy and no WAL of Herald's to replicate:
// the database's own backups and point-in-time recovery are the way (pg_dump / pg_restore, pg_basebackup with WAL
// archiving), which Herald neither runs nor lists.

/** The sentence every refusal (API 409, CLI exit 2, the pages) uses to point at PostgreSQL's own tools. */
export const POSTGRES_BACKUP_HINT =
  "On PostgreSQL, back up and restore with the database's own tools: pg_dump / pg_restore for a copy, pg_basebackup with WAL archiving for point-in-time recovery (docs/postgres.md). Herald's on-demand backups (VACUUM INTO) and Litestream are for the SQLite file only.";

/** Whether Herald's own backups (VACUUM INTO copies, Litestream) apply on this engine. */
export const ownBackupsApply = (dialect: Dialect): boolean => dialect === "sqlite";

/** The 409 of the backup routes on PostgreSQL (backup_not_on_postgres); nothing on SQLite. */
export function refuseBackupsOnPostgres(dialect: Dialect): void {
  if (!ownBackupsApply(dialect)) throw new AppError("backup_not_on_postgres", `This service runs on PostgreSQL. ${POSTGRES_BACKUP_HINT}`);
}
