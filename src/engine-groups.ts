import type { Config } from "./config";

// What runs on PostgreSQL while its mode is a preview (HERALD_PG_PREVIEW=1; docs/postgres.md). A group is on the
// storage port — all its SQL through ctx.store — or it is off on PostgreSQL: its routes stay in the API (so the
// document and clients do not change) but answer 503 not_available_on_postgres before anything else runs, and
// its jobs are not scheduled. On SQLite every group runs.

/** Route and job groups, named as startup and docs/postgres.md name them. */
export type Group =
  | "system"
  | "auth"
  | "partner"
  | "users"
  | "donations"
  | "salutes"
  | "webhooks"
  | "sandbox"
  | "developers"
  | "jobs"
  | "ops"
  | "chain"
  | "audio-share"
  | "status"
  | "transparency"
  | "messenger";

/** The groups on the storage port: they run on PostgreSQL. One per line: the groups move onto the port one by one. */
export const PORTED_GROUPS: ReadonlySet<Group> = new Set<Group>([
  "system",
  "auth",
  "partner",
  "users",
  "donations",
  "salutes",
  "webhooks",
  "sandbox",
  "developers",
  "jobs",
  "ops",
  "status",
  "chain",
  "messenger",
  "transparency",
  "audio-share",
]);

export const runsOn = (config: Pick<Config, "database">, group: Group): boolean => config.database.engine === "sqlite" || PORTED_GROUPS.has(group);

/** The groups that are off on this engine (none on SQLite), for the startup line and /readyz. */
export function groupsOff(config: Pick<Config, "database">): Group[] {
  const all: Group[] = [
    "system",
    "auth",
    "partner",
    "users",
    "donations",
    "salutes",
    "webhooks",
    "sandbox",
    "developers",
    "jobs",
    "ops",
    "chain",
    "audio-share",
    "status",
    "transparency",
    "messenger",
  ];
  return all.filter((g) => !runsOn(config, g));
}
