import type { Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { ops403Suppressions } from "../tables";

// The 403 digest's SQL: its suppression rules and its reads of the request log's hourly rollups (layering.test.ts
// allows the read). Written once for both engines.

export type RuleRow = RowOf<typeof ops403Suppressions>;

export const insertRule = (t: Queryable, r: Omit<RuleRow, "id" | "revoked_at">) =>
  t.get<RuleRow>(
    `INSERT INTO ops_403_suppressions (path_pattern, partner_key_id, client_prefix, reason, owner, expires_at, created_at, created_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [r.path_pattern, r.partner_key_id, r.client_prefix, r.reason, r.owner, r.expires_at, r.created_at, r.created_by],
  );

export const ruleById = (q: Queryable, id: number) => q.get<RuleRow>("SELECT * FROM ops_403_suppressions WHERE id = ?", [id]);

/** Revokes a rule not revoked yet; null when it was (by another request too: of two revokes, one wins). */
export const revokeRule = (t: Queryable, id: number, nowIso: string) =>
  t.get<RuleRow>("UPDATE ops_403_suppressions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING *", [nowIso, id]);

/** Rules newest first, before id `after` when set, optionally of one state ('active' | 'expired' | 'revoked') at `nowIso`. */
export const rulesPage = (q: Queryable, page: { after: number | null; limit: number; offset: number }, state: string | null, nowIso: string) =>
  q.all<RuleRow>(
    `SELECT * FROM ops_403_suppressions WHERE (CAST(? AS bigint) IS NULL OR id < ?)
       AND (CAST(? AS text) IS NULL OR (? = 'revoked' AND revoked_at IS NOT NULL) OR (? = 'expired' AND revoked_at IS NULL AND expires_at <= ?)
            OR (? = 'active' AND revoked_at IS NULL AND expires_at > ?))
     ORDER BY id DESC LIMIT ? OFFSET ?`,
    [page.after, page.after, state, state, state, nowIso, state, nowIso, page.limit, page.offset],
  );

export const allRules = (q: Queryable) => q.all<RuleRow>("SELECT * FROM ops_403_suppressions ORDER BY id");

/** The rules in force at `nowIso`, lowest id first. */
export const rulesInForce = (q: Queryable, nowIso: string) =>
  q.all<RuleRow>("SELECT * FROM ops_403_suppressions WHERE revoked_at IS NULL AND expires_at > ? ORDER BY id", [nowIso]);

/** The 403 rollup rows of the hours from..to (inclusive), in hour order. */
export const forbiddenRollups = (q: Queryable, fromHour: string, toHour: string) =>
  q.all<{ hour: string; route: string; partner_key_id: string; client_prefix: string; count: number }>(
    "SELECT hour, route, partner_key_id, client_prefix, count FROM request_log_403_hourly WHERE hour >= ? AND hour <= ? ORDER BY hour",
    [fromHour, toHour],
  );

export const hourlyRequests = (q: Queryable, fromHour: string, toHour: string) =>
  q.all<{ hour: string; requests: number }>("SELECT hour, requests FROM request_log_hourly WHERE hour >= ? AND hour <= ?", [fromHour, toHour]);

export async function firstRolledHour(q: Queryable): Promise<string | null> {
  return (await q.get<{ hour: string | null }>("SELECT min(hour) AS hour FROM request_log_hourly"))?.hour ?? null;
}
