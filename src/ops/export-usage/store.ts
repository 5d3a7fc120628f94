import { changed, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { opsDownloadTokens, opsExportUsage } from "../tables";

// ops_export_usage and ops_download_tokens: the only SQL that touches them, written once for both engines.

export type UsageRow = RowOf<typeof opsExportUsage>;
export type TokenRow = RowOf<typeof opsDownloadTokens>;

export async function insertUsage(q: Queryable, u: Omit<UsageRow, "id">): Promise<void> {
  await q.run("INSERT INTO ops_export_usage (at, actor, export, bytes, source) VALUES (?, ?, ?, ?, ?)", [u.at, u.actor, u.export, u.bytes, u.source]);
}

/** Downloads in [from, to], oldest first; `source` 'all' matches every source (one statement for every filter). */
export function usageBetween(q: Queryable, from: string, to: string, source: string) {
  return q.all<Pick<UsageRow, "at" | "actor" | "export" | "bytes" | "source">>(
    "SELECT at, actor, export, bytes, source FROM ops_export_usage WHERE at >= ? AND at <= ? AND (CAST(? AS text) = 'all' OR source = ?) ORDER BY at, id",
    [from, to, source, source],
  );
}

/** Downloads and bytes per (actor, source) of the exports under `prefix`, optionally of one actor. */
export function usageByActor(q: Queryable, prefix: string, actor: string | null) {
  return q.all<{ actor: string; source: string; downloads: number; bytes: number }>(
    `SELECT actor, source, count(*) AS downloads, coalesce(sum(bytes), 0) AS bytes FROM ops_export_usage
     WHERE substr(export, 1, ?) = ? AND (CAST(? AS text) IS NULL OR actor = ?) GROUP BY actor, source ORDER BY actor, source`,
    [prefix.length, prefix, actor, actor],
  );
}

export async function insertToken(q: Queryable, r: Omit<TokenRow, "used_at">): Promise<void> {
  await q.run("INSERT INTO ops_download_tokens (token_hash, actor, export, params, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, NULL)", [
    r.token_hash,
    r.actor,
    r.export,
    r.params,
    r.created_at,
    r.expires_at,
  ]);
}

export const tokenOf = (q: Queryable, hash: string) =>
  q.get<Pick<TokenRow, "actor" | "export" | "params" | "expires_at" | "used_at">>(
    "SELECT actor, export, params, expires_at, used_at FROM ops_download_tokens WHERE token_hash = ?",
    [hash],
  );

/** Uses the token up: only where it is still unused and unexpired, so of two racing downloads one wins. */
export const claimToken = (q: Queryable, hash: string, nowIso: string) =>
  changed(q, "UPDATE ops_download_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?", [nowIso, hash, nowIso]);

/** Tokens requested, used and expired unused per actor, for the exports under `prefix`. */
export function tokensByActor(q: Queryable, prefix: string, actor: string | null, nowIso: string) {
  return q.all<{ actor: string; requested: number; used: number; expired: number }>(
    `SELECT actor, count(*) AS requested, count(*) FILTER (WHERE used_at IS NOT NULL) AS used,
       count(*) FILTER (WHERE used_at IS NULL AND expires_at <= ?) AS expired
     FROM ops_download_tokens WHERE substr(export, 1, ?) = ? AND (CAST(? AS text) IS NULL OR actor = ?) GROUP BY actor ORDER BY actor`,
    [nowIso, prefix.length, prefix, actor, actor],
  );
}
