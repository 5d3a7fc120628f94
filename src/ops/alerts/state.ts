import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { activeSilences, type ActiveSilences } from "./silences";
import { baseOf, enqueueLinkMessage, type LinkMessage, recordLinkSkip } from "../link-inbox/notify";
import { anyPendingRun, insertState, lockState, type PendingRun, pendingRuns, runsByIds, type StateRow, updateState } from "./store";

// Alert state: turns ops_alert_runs rows into each alert key's state (ops_alert_state) and sends its state CHANGES,
// as Alertmanager and PagerDuty do: fired at its level, sent again on escalation (even inside the cooldown), and
// resolved only if its firing was sent; a steady level sends nothing more. LINK_INBOX_COOLDOWN_SECONDS still holds
// per issue and target (src/ops/link-inbox/notify.ts). A silenced alert changes state; its notice becomes a `silenced` skip.
//
// Which rows are new is decided per key (id above its state's last_row_id), never by a watermark: ids commit out of
// order on PostgreSQL, so "rows after id N" would skip a late row for ever. A writer applies its own rows
// (recordAlertRun); the link-inbox job sweeps the last day every 5 s for the rest. Each key is applied in its own
// transaction that first locks the key's state row (store.ts lockState): two instances take turns and a transition
// (and its notice) is applied once. A row older than one already applied is stale and skipped.

export type AlertLevel = "ok" | "warn" | "fail";
const RANK: Record<AlertLevel, number> = { ok: 0, warn: 1, fail: 2 };
/** ok / warn / fail; any other status a writer used ("pass") is not firing. */
export const levelOf = (status: string): AlertLevel => (status === "fail" ? "fail" : status === "warn" ? "warn" : "ok");
export const alertKeyOf = (source: string, name: string) => `${source}:${name}`;
/** The link-inbox issue of an alert: preflight anomalies keep their own issue ids. */
export const alertIssueId = (source: string, name: string) => (source === "preflight" ? `preflight:${name}` : `alert:${source}:${name}`);
/** The operator page of one alert (src/ops/alerts/alert-pages.ts), the link every alert notice carries. */
export const alertPagePath = (id: number) => `/admin/ops/alerts-monitor/alerts/${id}`;

export type AlertStateRow = StateRow & { level: AlertLevel; notified_level: AlertLevel | null };
type RunRow = PendingRun;

type Deps = Pick<AppContext, "store" | "clock" | "config">;

const BATCH = 500;
const MAX_BATCHES = 40;
/** The sweep looks at the last day's rows: a writer applies its own rows at once, the sweep catches the others. */
const SWEEP_LOOKBACK_MS = 86_400_000;

/** An alert row's details as an object: JSON that is not an object is wrapped as `value`, text that is not JSON as `text`. */
export function parseDetails(raw: string | null): Record<string, unknown> | null {
  if (raw === null) return null;
  try {
    const v = JSON.parse(raw);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    // A row written by hand (or by an older writer) with text that is not JSON: shown as it is, never a 500.
    return { text: raw };
  }
}

/**
 * Whether an evaluation is of a check with nothing to judge in this deployment: a status check whose details say
 * `configured: false` (the chain's checks without TOKEN_MINT). Its ok means "not configured", not "healthy".
 */
export function notConfigured(details: string | Record<string, unknown> | null): boolean {
  const d = typeof details === "string" ? parseDetails(details) : details;
  return d?.configured === false;
}

/** A short human summary of an evaluation's details: a status check's summary, the audit's reasons, a finding's why. */
export function summaryOf(details: string | Record<string, unknown> | null): string | null {
  const d = typeof details === "string" ? parseDetails(details) : details;
  if (!d) return null;
  if (typeof d.summary === "string" && d.summary) return d.summary;
  if (Array.isArray(d.reasons) && d.reasons.length) return d.reasons.filter((r) => typeof r === "string").join("; ");
  if (typeof d.error === "string") return d.error;
  return null;
}

/** At most `max` characters of a summary for a chat message, cut after a whole word with "…" when longer. */
function clipped(text: string | null, max: number): string | null {
  if (text === null || text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * What a resolved notice says of the evaluation that ended the firing ("now") and of the last one while it fired, in
 * words: each one's summary (a digest alert's ok row says which finding is gone, the dead-letter alert counts the
 * letters), else its bare value named as one. A resolution's value alone ("(0)") would not say what resolved.
 */
function resolvedWords(r: RunRow, firing: RunRow | null): string {
  const words = (run: RunRow) => clipped(summaryOf(run.details), 200) ?? (run.value ? `value ${run.value.slice(0, 100)}` : null);
  const now = words(r) ?? "ok";
  const before = firing ? words(firing) : null;
  return ` — now: ${now}${before ? `; while firing: ${before}` : ""}`;
}

function messageOf(ctx: Deps, s: AlertStateRow, r: RunRow, kind: "fired" | "resolved", previous: AlertLevel, firing: RunRow | null = null): LinkMessage {
  const link = `${baseOf(ctx)}${alertPagePath(s.id)}`;
  const preflight = r.source === "preflight";
  const value = r.value ? ` (${r.value.slice(0, 100)})` : "";
  const summary = summaryOf(r.details);
  const about = summary ? ` — ${clipped(summary, 200)}` : "";
  const issueId = alertIssueId(r.source, r.name);
  if (kind === "resolved") {
    const text = `[Herald] Alert resolved: ${r.source}/${r.name} (was ${previous} since ${s.fired_at ?? s.since})${resolvedWords(r, firing)} ${link}`;
    return { event: "alert.resolved", issueId, text, link };
  }
  const what = preflight ? `Preflight anomaly: ${r.name}` : `Alert fired: ${r.source}/${r.name}`;
  const text = `[Herald] ${what} [${levelOf(r.status)}]${value}${about} at ${r.at} ${link}`;
  return { event: preflight ? "preflight.anomaly" : "alert.fired", issueId, text, link };
}

/**
 * Sends (queues) one notice on `t` unless a silence holds it back. Returns whether a message was queued to at least
 * one target — what the state remembers as "sent", so that a resolution is sent only for a firing that was.
 */
async function notify(t: Queryable, ctx: Deps, silences: ActiveSilences, m: LinkMessage, alertKey: string): Promise<boolean> {
  const silence = silences.of(alertKey);
  if (silence) {
    await recordLinkSkip(t, ctx, m, "", "silenced", `silence ${silence.id} by ${silence.created_by} until ${silence.ends_at}: ${silence.reason.slice(0, 200)}`);
    return false;
  }
  return (await enqueueLinkMessage(t, ctx, m)).queued > 0;
}

const notified = (ctx: Deps, level: AlertLevel) => ({ notified_level: level, notified_at: ctx.clock.now().toISOString() });

/** The first row of a key: its state is made at the row's level, and a firing is sent. */
async function firstState(t: Queryable, ctx: Deps, silences: ActiveSilences, key: string, r: RunRow): Promise<AlertStateRow | null> {
  const level = levelOf(r.status);
  const row = await insertState(t, {
    alert_key: key,
    source: r.source,
    name: r.name,
    level,
    since: r.at,
    fired_at: level === "ok" ? null : r.at,
    last_row_id: r.id,
    last_seen_at: r.at,
  });
  if (!row) return null; // another instance made it first: the caller locks and applies on top of it
  let s = row as AlertStateRow;
  if (level !== "ok" && (await notify(t, ctx, silences, messageOf(ctx, s, r, "fired", "ok"), key))) {
    s = { ...s, ...notified(ctx, level) };
    await updateState(t, s);
  }
  return s;
}

/** One row on top of the key's state: the next state, with the notice its change sends. */
async function nextState(t: Queryable, ctx: Deps, silences: ActiveSilences, key: string, s: AlertStateRow, r: RunRow): Promise<AlertStateRow> {
  const level = levelOf(r.status);
  const previous = s.level;
  const next: AlertStateRow = { ...s, last_row_id: r.id, last_seen_at: r.at };
  if (level === previous) return next;
  next.level = level;
  next.since = r.at;
  if (level === "ok") {
    next.resolved_at = r.at;
    // The resolution of a firing nobody was told about (silenced, cooled down, no target) would be noise.
    if (s.notified_level === "warn" || s.notified_level === "fail") {
      // The row before this one is the last evaluation while it fired: the notice says what it was.
      const [firing] = await runsByIds(t, [s.last_row_id]);
      if (await notify(t, ctx, silences, messageOf(ctx, next, r, "resolved", previous, firing ?? null), key)) Object.assign(next, notified(ctx, "ok"));
      else next.notified_level = null;
    }
    return next;
  }
  if (previous === "ok") {
    next.fired_at = r.at;
    next.resolved_at = null;
    next.notified_level = null;
  }
  const m = messageOf(ctx, next, r, "fired", previous);
  // Escalating within one firing (warn → fail) past what was sent is news even inside the cooldown; a new
  // firing or a de-escalation is not (else an alert flapping between ok and fail would page on every flap).
  const sentRank = next.notified_level === "warn" || next.notified_level === "fail" ? RANK[next.notified_level] : 0;
  m.bypassCooldown = previous !== "ok" && RANK[level] > RANK[previous] && RANK[level] > sentRank;
  if (await notify(t, ctx, silences, m, key)) Object.assign(next, notified(ctx, level));
  return next;
}

/**
 * Applies one key's rows (oldest first) in the caller's transaction `t`, after locking the key's state (the claim
 * that makes two instances take turns). Returns the rows applied; a row at or below last_row_id was applied
 * already (by another instance, or an earlier pass) or is older than one that was, and is skipped.
 */
async function applyKey(t: Queryable, ctx: Deps, silences: ActiveSilences, key: string, rows: RunRow[]): Promise<number> {
  let s = (await lockState(t, key)) as AlertStateRow | null;
  let applied = 0;
  for (const r of rows) {
    if (!s) {
      s = await firstState(t, ctx, silences, key, r);
      if (s) {
        applied++;
        continue;
      }
      s = (await lockState(t, key)) as AlertStateRow | null;
      if (!s) throw new Error(`alert state of ${key} neither inserted nor found`);
    }
    if (r.id <= s.last_row_id) continue;
    s = await nextState(t, ctx, silences, key, s, r);
    await updateState(t, s);
    applied++;
  }
  return applied;
}

async function applyRows(ctx: Deps, rows: RunRow[]): Promise<number> {
  const silences = await activeSilences(ctx, ctx.clock.now().toISOString());
  let applied = 0;
  // One transaction per key: the state, the outbox rows and the skip events of a key's rows commit together, and
  // a transaction locks one state row only (two instances locking keys in different orders cannot deadlock).
  for (const [key, list] of Map.groupBy(rows, (r) => alertKeyOf(r.source, r.name))) applied += await ctx.store.tx((t) => applyKey(t, ctx, silences, key, list));
  return applied;
}

/**
 * Applies alert-run rows not applied yet: `ids` (the rows a writer just recorded, whatever their time), or every
 * row of the last day that is newer than its key's state, in batches of 500. Returns the rows applied.
 */
export async function applyAlertTransitions(ctx: Deps, ids?: readonly number[]): Promise<number> {
  if (ids) return ids.length ? applyRows(ctx, await runsByIds(ctx.store, ids)) : 0;
  const since = new Date(ctx.clock.now().getTime() - SWEEP_LOOKBACK_MS).toISOString();
  // The link-inbox job calls this every 5 s: with nothing new (the usual case) it reads and takes no lock.
  if (!(await anyPendingRun(ctx.store, since))) return 0;
  let applied = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const rows = await pendingRuns(ctx.store, since, BATCH);
    if (rows.length === 0) break;
    applied += await applyRows(ctx, rows);
    if (rows.length < BATCH) break;
  }
  return applied;
}
