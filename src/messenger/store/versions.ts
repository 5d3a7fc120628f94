import type { Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerVersions } from "../tables";

// messenger_versions: a counter per cache that instances keep in memory (src/messenger/version-watch.ts). The
// writer bumps it in the transaction of its change, so an instance that sees the new number also sees the change.
// A row is also a lock: taking it first (bumpVersion, lockVersionRow) runs its writers one at a time on every
// engine — games_config the configuration writes, daily_players the stats folds, manual_grants the grants.

export type VersionName = "games_config" | "daily_players" | "manual_grants";

type VersionRow = RowOf<typeof messengerVersions>;

export async function bumpVersion(t: Queryable, name: VersionName, at: string): Promise<void> {
  await t.run(
    `INSERT INTO messenger_versions (name, version, updated_at) VALUES (?, 1, ?)
     ON CONFLICT (name) DO UPDATE SET version = messenger_versions.version + 1, updated_at = excluded.updated_at`,
    [name, at],
  );
}

/** The counter now; 0 before the first bump. */
export async function versionOf(q: Queryable, name: VersionName): Promise<number> {
  return (await q.get<Pick<VersionRow, "version">>("SELECT version FROM messenger_versions WHERE name = ?", [name]))?.version ?? 0;
}

/**
 * Takes the row's lock for the rest of the transaction `t`, making it first if need be (a no-op upsert: the
 * conflicting row is locked on PostgreSQL; SQLite's one writer serializes already).
 */
export async function lockVersionRow(t: Queryable, name: VersionName, at: string): Promise<void> {
  await t.run(
    `INSERT INTO messenger_versions (name, version, updated_at) VALUES (?, 0, ?)
     ON CONFLICT (name) DO UPDATE SET updated_at = messenger_versions.updated_at`,
    [name, at],
  );
}
