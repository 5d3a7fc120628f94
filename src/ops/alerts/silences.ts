import type { Actor } from "../../auth/actors";
import { actorLabel } from "../../auth/actors";
import { writeAudit } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError, NotFoundError, ValidationError } from "../../http/errors";
import { pageOf, type PageRequest } from "../../http/pagination";
import { globToRegExp } from "../digest/suppressions";

// Alert silences, as Alertmanager and PagerDuty operators know them: "I know about this, stop paging me until
// then". A silence matches alert keys (`<source>:<name>`, `*` for any characters) and ends at a set time (at most
// MAX_SILENCE_DAYS ahead, so a forgotten silence cannot hide an alert for ever) or earlier by hand. It holds back
// notices only: the alert is still evaluated, recorded, firing in firing.json and in the readiness verdict.
// Creating and expiring are audited in the same transaction as the change (admin_audit).

export const MAX_SILENCE_DAYS = 30;

interface SilenceRow {
  id: number;
  matcher: string;
  reason: string;
  created_by: string;
  created_at: string;
  ends_at: string;
  expired_at: string | null;
  expired_by: string | null;
}

export type SilenceState = "active" | "expired";
export type Silence = SilenceRow & { state: SilenceState };

export interface SilenceInput {
  matcher: string;
  reason: string;
  ends_at: string;
}

interface Who {
  actor: Actor;
  requestId: string;
}

/** Ended by hand, or past its end: either way no longer holding anything back. */
const stateOf = (r: SilenceRow, nowIso: string): SilenceState => (r.expired_at !== null || r.ends_at <= nowIso ? "expired" : "active");
const view = (r: SilenceRow, nowIso: string): Silence => ({ ...r, state: stateOf(r, nowIso) });

function validate(ctx: AppContext, input: SilenceInput) {
  const problems: Array<{ field: string; problem: string }> = [];
  const matcher = input.matcher.trim();
  if (!/^[\x21-\x7e]+$/.test(matcher)) problems.push({ field: "body.matcher", problem: "must be an alert key or a pattern of visible ASCII characters" });
  const now = ctx.clock.now();
  const endsMs = Date.parse(input.ends_at);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(input.ends_at) || Number.isNaN(endsMs))
    problems.push({ field: "body.ends_at", problem: "must be an ISO 8601 time such as 2026-01-15T00:00:00Z" });
  else if (endsMs <= now.getTime()) problems.push({ field: "body.ends_at", problem: "must be in the future" });
  else if (endsMs > now.getTime() + MAX_SILENCE_DAYS * 86_400_000)
    problems.push({ field: "body.ends_at", problem: `must be at most ${MAX_SILENCE_DAYS} days ahead` });
  if (problems.length) throw new ValidationError(`Invalid silence: ${problems.map((p) => `${p.field} ${p.problem}`).join("; ")}`, problems);
  return { matcher, endsAt: new Date(endsMs).toISOString(), nowIso: now.toISOString() };
}

export function createSilence(ctx: AppContext, who: Who, input: SilenceInput): Silence {
  const v = validate(ctx, input);
  const sqlite = ctx.db.sqlite;
  const row = sqlite.transaction(() => {
    const r = sqlite
      .query("INSERT INTO ops_alert_silences (matcher, reason, created_by, created_at, ends_at) VALUES (?, ?, ?, ?, ?) RETURNING *")
      .get(v.matcher, input.reason, actorLabel(who.actor), v.nowIso, v.endsAt) as SilenceRow;
    writeAudit(sqlite, {
      at: v.nowIso,
      actor: who.actor,
      action: "ops.alert_silence.create",
      target: `ops_alert_silence:${r.id}`,
      details: { matcher: r.matcher, reason: r.reason, ends_at: r.ends_at },
      requestId: who.requestId,
    });
    return r;
  })();
  return view(row, v.nowIso);
}

/** Ends a silence now; 404 for an unknown id, 409 when it already ended (by hand or by time). */
export function expireSilence(ctx: AppContext, who: Who, id: number): Silence {
  const sqlite = ctx.db.sqlite;
  const nowIso = ctx.clock.now().toISOString();
  const row = sqlite.transaction(() => {
    const r = sqlite.query("SELECT * FROM ops_alert_silences WHERE id = ?").get(id) as SilenceRow | null;
    if (!r) throw new NotFoundError("silence", id);
    if (stateOf(r, nowIso) === "expired")
      throw new AppError("conflict", `Silence ${id} already ended at ${r.expired_at ?? r.ends_at}${r.expired_by ? ` (expired by ${r.expired_by})` : ""}`);
    const updated = sqlite
      .query("UPDATE ops_alert_silences SET expired_at = ?, expired_by = ? WHERE id = ? RETURNING *")
      .get(nowIso, actorLabel(who.actor), id) as SilenceRow;
    writeAudit(sqlite, {
      at: nowIso,
      actor: who.actor,
      action: "ops.alert_silence.expire",
      target: `ops_alert_silence:${id}`,
      details: { matcher: r.matcher, ends_at: r.ends_at },
      requestId: who.requestId,
    });
    return updated;
  })();
  return view(row, nowIso);
}

/** Silences, newest first, optionally of one state at the clock's now. */
export function listSilences(ctx: AppContext, page: PageRequest, state?: SilenceState) {
  const nowIso = ctx.clock.now().toISOString();
  const rows = ctx.db.sqlite
    .query(
      `SELECT * FROM ops_alert_silences WHERE (?1 IS NULL OR id < ?1)
         AND (?4 IS NULL OR (?4 = 'expired' AND (expired_at IS NOT NULL OR ends_at <= ?5)) OR (?4 = 'active' AND expired_at IS NULL AND ends_at > ?5))
       ORDER BY id DESC LIMIT ?2 OFFSET ?3`,
    )
    .all(page.after, page.limit + 1, page.offset, state ?? null, nowIso) as SilenceRow[];
  const p = pageOf(rows, page, (r) => r.id);
  return { ...p, items: p.items.map((r) => view(r, nowIso)) };
}

/** Matches alert keys: the silences in force at `nowIso`, each with its compiled matcher. */
export interface ActiveSilences {
  /** The silence holding back this key (the one ending last; lowest id on a tie), or null. */
  of(alertKey: string): Silence | null;
}

export function activeSilences(ctx: Pick<AppContext, "db">, nowIso: string): ActiveSilences {
  const rows = ctx.db.sqlite
    .query("SELECT * FROM ops_alert_silences WHERE expired_at IS NULL AND ends_at > ? ORDER BY ends_at DESC, id")
    .all(nowIso) as SilenceRow[];
  const compiled = rows.map((r) => ({ r, re: globToRegExp(r.matcher) }));
  return {
    of(alertKey) {
      const hit = compiled.find((c) => c.re.test(alertKey));
      return hit ? view(hit.r, nowIso) : null;
    },
  };
}
