import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import { auditOperator } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError, found, problemsOrThrow } from "../../http/errors/errors";
import { pageOf, type PageRequest } from "../../http/pagination";
import { clientPrefix } from "../../http/request-log/rollup";
import { allRules, insertRule, revokeRule, ruleById, type RuleRow, rulesInForce, rulesPage } from "./store";

// Operator rules that keep known 403 noise out of the digest's findings: a rollup row matches a rule when EVERY field
// the rule sets (path pattern, partner key, client prefix) matches it. Every rule expires (at most MAX_RULE_DAYS
// ahead), so a forgotten one cannot hide a real attack for ever. Creating and revoking are audited in the change's transaction.

export const MAX_RULE_DAYS = 90;

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

/** normalizePrefix's form of a trimmed prefix, the document's pattern: something before the first slash, then /24 or /48. */
export const CLIENT_PREFIX_PATTERN = "^\\s*[^/]+/(?:24|48)\\s*$";

/** How an end time starts (endProblem's first check), the document's pattern of its body fields: a date, then T. */
export const END_TIME_PATTERN = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T";
const END_TIME = new RegExp(END_TIME_PATTERN);

/** What is wrong with an end time (a rule's expiry, a silence's end): not ISO 8601, not ahead, or past `maxDays`; null when fine. */
export function endProblem(raw: string, now: Date, maxDays: number): string | null {
  const ms = Date.parse(raw);
  if (!END_TIME.test(raw) || Number.isNaN(ms)) return "must be an ISO 8601 time such as 2026-01-15T00:00:00Z";
  if (ms <= now.getTime()) return "must be in the future";
  return ms > now.getTime() + maxDays * 86_400_000 ? `must be at most ${maxDays} days ahead` : null;
}

function validate(ctx: AppContext, input: SuppressionInput) {
  const problems: Array<{ field: string; problem: string }> = [];
  const pathPattern = input.path_pattern?.trim() || null;
  const keyId = input.partner_key_id?.trim() || null;
  const rawPrefix = input.client_prefix?.trim() || null;
  const prefix = rawPrefix && normalizePrefix(rawPrefix);
  if (rawPrefix && !prefix) problems.push({ field: "body.client_prefix", problem: "must be an IPv4 /24 (203.0.113.0/24) or an IPv6 /48 (2001:db8:1::/48)" });
  if (!pathPattern && !keyId && !rawPrefix) problems.push({ field: "body", problem: "needs at least one of path_pattern, partner_key_id, client_prefix" });
  const now = ctx.clock.now();
  const expires = endProblem(input.expires_at, now, MAX_RULE_DAYS);
  if (expires) problems.push({ field: "body.expires_at", problem: expires });
  problemsOrThrow("suppression rule", problems);
  return { pathPattern, keyId, prefix, expiresAt: new Date(input.expires_at).toISOString(), nowIso: now.toISOString() };
}

export async function createSuppression(ctx: AppContext, admin: AdminRequest, input: SuppressionInput): Promise<SuppressionRule> {
  const v = validate(ctx, input);
  const row = await ctx.store.tx(async (t) => {
    const r = (await insertRule(t, {
      path_pattern: v.pathPattern,
      partner_key_id: v.keyId,
      client_prefix: v.prefix,
      reason: input.reason,
      owner: input.owner,
      expires_at: v.expiresAt,
      created_at: v.nowIso,
      created_by: actorLabel(admin.actor),
    }))!;
    await auditOperator(t, admin, v.nowIso, "ops.403_suppression.create", `ops_403_suppression:${r.id}`, { ...r });
    return r;
  });
  return view(row, v.nowIso);
}

export async function revokeSuppression(ctx: AppContext, admin: AdminRequest, id: number): Promise<SuppressionRule> {
  const nowIso = ctx.clock.now().toISOString();
  const revoked = (at: string | null) => new AppError("conflict", `Suppression rule ${id} was already revoked at ${at}`);
  const row = await ctx.store.tx(async (t) => {
    const r = found(await ruleById(t, id), "suppression rule", id);
    if (r.revoked_at !== null) throw revoked(r.revoked_at);
    // Conditional: of two operators revoking at once (on two instances), one wins and the other gets the 409.
    const updated = await revokeRule(t, id, nowIso);
    if (!updated) throw revoked((await ruleById(t, id))?.revoked_at ?? null);
    await auditOperator(t, admin, nowIso, "ops.403_suppression.revoke", `ops_403_suppression:${id}`, {
      state_before: stateOf(r, nowIso),
      expires_at: r.expires_at,
    });
    return updated;
  });
  return view(row, nowIso);
}

export async function listSuppressions(ctx: AppContext, page: PageRequest, state?: RuleState) {
  const nowIso = ctx.clock.now().toISOString();
  const rows = await rulesPage(ctx.store, { after: page.after, limit: page.limit + 1, offset: page.offset }, state ?? null, nowIso);
  const p = pageOf(rows, page, (r) => r.id);
  return { ...p, items: p.items.map((r) => view(r, nowIso)) };
}

/** Every rule with its state: the rules file an operator keeps under version control. */
export async function exportSuppressions(ctx: AppContext): Promise<SuppressionRule[]> {
  const nowIso = ctx.clock.now().toISOString();
  return (await allRules(ctx.store)).map((r) => view(r, nowIso));
}

export interface ActiveRule {
  id: number;
  matches(route: string, partnerKeyId: string, prefix: string): boolean;
}

/** The rules in force at `nowIso` (not revoked, expires_at after now), lowest id first: the first match wins. */
export async function activeRules(ctx: AppContext, nowIso: string): Promise<ActiveRule[]> {
  const rows = await rulesInForce(ctx.store, nowIso);
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
