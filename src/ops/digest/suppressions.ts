import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import { writeAudit } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError, NotFoundError, ValidationError } from "../../http/errors";
import { pageOf, type PageRequest } from "../../http/pagination";
import { clientPrefix } from "../../http/request-log/rollup";

// Operator rules that keep known 403 noise (a scanner's network, a partner's misconfigured job) out of the
// digest's findings. A rule names a path pattern and/or a partner key and/or a client prefix; a 403 rollup row
// matches a rule when EVERY field the rule sets matches it. Every rule expires (at most MAX_RULE_DAYS ahead), so a
// forgotten rule cannot hide a real attack for ever; revoking ends it earlier. Both are audited in the same
// transaction as the change.

export const MAX_RULE_DAYS = 90;

interface RuleRow {
  id: number;
  path_pattern: string | null;
  partner_key_id: string | null;
  client_prefix: string | null;
  reason: string;
  owner: string;
  expires_at: string;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
}

export type RuleState = "active" | "expired" | "revoked";
export type SuppressionRule = RuleRow & { state: RuleState };

export interface SuppressionInput {
  path_pattern?: string;
  partner_key_id?: string;
  client_prefix?: string;
  reason: string;
  owner: string;
  expires_at: string;
}

const stateOf = (r: RuleRow, nowIso: string): RuleState => (r.revoked_at !== null ? "revoked" : r.expires_at <= nowIso ? "expired" : "active");
const view = (r: RuleRow, nowIso: string): SuppressionRule => ({ ...r, state: stateOf(r, nowIso) });

/** A glob over route templates: `*` is any run of characters (slashes included); everything else is literal. */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`);
}

/** The canonical prefix of `203.0.113.7/24`, `203.0.113.0/24` or `2001:db8:1::/48`; null when it is not a /24 or /48. */
export function normalizePrefix(raw: string): string | null {
  const slash = raw.indexOf("/");
  if (slash === -1) return null;
  const canonical = clientPrefix(raw.slice(0, slash));
  if (canonical === "") return null;
  return canonical.endsWith(raw.slice(slash)) ? canonical : null;
}

function validate(ctx: AppContext, input: SuppressionInput) {
  const problems: Array<{ field: string; problem: string }> = [];
  const pathPattern = input.path_pattern?.trim() || null;
  const keyId = input.partner_key_id?.trim() || null;
  let prefix: string | null = null;
  if (input.client_prefix !== undefined && input.client_prefix.trim() !== "") {
    prefix = normalizePrefix(input.client_prefix.trim());
    if (!prefix) problems.push({ field: "body.client_prefix", problem: "must be an IPv4 /24 (203.0.113.0/24) or an IPv6 /48 (2001:db8:1::/48)" });
  }
  if (!pathPattern && !keyId && !input.client_prefix?.trim())
    problems.push({ field: "body", problem: "needs at least one of path_pattern, partner_key_id, client_prefix" });
  const now = ctx.clock.now();
  const expiresMs = Date.parse(input.expires_at);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(input.expires_at) || Number.isNaN(expiresMs))
    problems.push({ field: "body.expires_at", problem: "must be an ISO 8601 time such as 2026-01-15T00:00:00Z" });
  else if (expiresMs <= now.getTime()) problems.push({ field: "body.expires_at", problem: "must be in the future" });
  else if (expiresMs > now.getTime() + MAX_RULE_DAYS * 86_400_000)
    problems.push({ field: "body.expires_at", problem: `must be at most ${MAX_RULE_DAYS} days ahead` });
  if (problems.length) throw new ValidationError(`Invalid suppression rule: ${problems.map((p) => `${p.field} ${p.problem}`).join("; ")}`, problems);
  return { pathPattern, keyId, prefix, expiresAt: new Date(expiresMs).toISOString(), nowIso: now.toISOString() };
}

export function createSuppression(ctx: AppContext, admin: AdminRequest, input: SuppressionInput): SuppressionRule {
  const v = validate(ctx, input);
  const sqlite = ctx.db.sqlite;
  const row = sqlite.transaction(() => {
    const r = sqlite
      .query(
        `INSERT INTO ops_403_suppressions (path_pattern, partner_key_id, client_prefix, reason, owner, expires_at, created_at, created_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(v.pathPattern, v.keyId, v.prefix, input.reason, input.owner, v.expiresAt, v.nowIso, actorLabel(admin.actor)) as RuleRow;
    writeAudit(sqlite, {
      at: v.nowIso,
      actor: admin.actor,
      action: "ops.403_suppression.create",
      target: `ops_403_suppression:${r.id}`,
      details: { ...r },
      requestId: admin.requestId,
    });
    return r;
  })();
  return view(row, v.nowIso);
}

export function revokeSuppression(ctx: AppContext, admin: AdminRequest, id: number): SuppressionRule {
  const sqlite = ctx.db.sqlite;
  const nowIso = ctx.clock.now().toISOString();
  const row = sqlite.transaction(() => {
    const r = sqlite.query("SELECT * FROM ops_403_suppressions WHERE id = ?").get(id) as RuleRow | null;
    if (!r) throw new NotFoundError("suppression rule", id);
    if (r.revoked_at !== null) throw new AppError("conflict", `Suppression rule ${id} was already revoked at ${r.revoked_at}`);
    const updated = sqlite.query("UPDATE ops_403_suppressions SET revoked_at = ? WHERE id = ? RETURNING *").get(nowIso, id) as RuleRow;
    writeAudit(sqlite, {
      at: nowIso,
      actor: admin.actor,
      action: "ops.403_suppression.revoke",
      target: `ops_403_suppression:${id}`,
      details: { state_before: stateOf(r, nowIso), expires_at: r.expires_at },
      requestId: admin.requestId,
    });
    return updated;
  })();
  return view(row, nowIso);
}

/** Rules, newest first, optionally of one state at the clock's now. */
export function listSuppressions(ctx: AppContext, page: PageRequest, state?: RuleState) {
  const nowIso = ctx.clock.now().toISOString();
  const rows = ctx.db.sqlite
    .query(
      `SELECT * FROM ops_403_suppressions WHERE (?1 IS NULL OR id < ?1)
         AND (?4 IS NULL OR (?4 = 'revoked' AND revoked_at IS NOT NULL) OR (?4 = 'expired' AND revoked_at IS NULL AND expires_at <= ?5)
              OR (?4 = 'active' AND revoked_at IS NULL AND expires_at > ?5))
       ORDER BY id DESC LIMIT ?2 OFFSET ?3`,
    )
    .all(page.after, page.limit + 1, page.offset, state ?? null, nowIso) as RuleRow[];
  const p = pageOf(rows, page, (r) => r.id);
  return { ...p, items: p.items.map((r) => view(r, nowIso)) };
}

/** Every rule with its state: the rules file an operator keeps under version control. */
export function exportSuppressions(ctx: AppContext): SuppressionRule[] {
  const nowIso = ctx.clock.now().toISOString();
  return (ctx.db.sqlite.query("SELECT * FROM ops_403_suppressions ORDER BY id").all() as RuleRow[]).map((r) => view(r, nowIso));
}

/** A rule ready to test rollup rows with. */
export interface ActiveRule {
  id: number;
  matches(route: string, partnerKeyId: string, prefix: string): boolean;
}

/** The rules in force at `nowIso` (not revoked, expires_at after now), lowest id first: the first match wins. */
export function activeRules(ctx: AppContext, nowIso: string): ActiveRule[] {
  const rows = ctx.db.sqlite.query("SELECT * FROM ops_403_suppressions WHERE revoked_at IS NULL AND expires_at > ? ORDER BY id").all(nowIso) as RuleRow[];
  return rows.map((r) => {
    const path = r.path_pattern === null ? null : globToRegExp(r.path_pattern);
    return {
      id: r.id,
      matches: (route, key, prefix) =>
        (path === null || path.test(route)) &&
        (r.partner_key_id === null || r.partner_key_id === key) &&
        (r.client_prefix === null || r.client_prefix === prefix),
    };
  });
}
