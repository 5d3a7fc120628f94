import type { Queryable, Store } from "../../db/port";

// The one database read of the backups area: the journal mode the Litestream section shows. A PRAGMA, so SQLite only
// (docs/design.md §8a); PostgreSQL has no journal mode of Herald's and no Litestream, so the answer there is "n/a".

/** SQLite's journal mode ("wal" is what Litestream needs). */
async function journalModeSqlite(q: Queryable): Promise<string> {
  const row = await q.get<Record<string, unknown>>("PRAGMA journal_mode");
  return row ? String(Object.values(row)[0]).toLowerCase() : "unknown";
}

export const journalModeOf = (store: Store): Promise<string> => (store.dialect === "sqlite" ? journalModeSqlite(store) : Promise.resolve("n/a"));
