import type { AppContext } from "../../context";
import { found } from "../../http/errors/errors";
import { activeSilences, type Silence } from "./silences";
import { type AlertLevel, type AlertStateRow, alertIssueId, alertPagePath, parseDetails, summaryOf } from "./state";
import { firingStates, type JoinedState, recentStates, runHistory, runsOfSince, stateById, stateLevels } from "./store";
import { type NoticeRow, noticesOfIssue } from "../link-inbox/store-reads";

// What operators read of the alert state: the "firing now" list and one alert with its history and notices. Reads
// only: a row written other than by recordAlertRun shows after one link-inbox tick (5 s) at most.

type Joined = JoinedState & AlertStateRow;

function viewOf(j: Joined, silence: Silence | null) {
  return {
    id: j.id,
    key: j.alert_key,
    source: j.source,
    name: j.name,
    level: j.level,
    since: j.since,
    // When it last fired: kept once it resolves, so a resolved alert says both when it fired and when it ended.
    fired_at: j.fired_at,
    resolved_at: j.resolved_at,
    last_evaluated_at: j.last_seen_at,
    value: j.value,
    summary: summaryOf(j.details),
    details: parseDetails(j.details),
    silenced_by: silence
      ? { id: silence.id, matcher: silence.matcher, reason: silence.reason, created_by: silence.created_by, ends_at: silence.ends_at }
      : null,
    notified_level: j.notified_level,
    notified_at: j.notified_at,
    /** The alert's operator page (a path under PUBLIC_BASE_URL). */
    page: alertPagePath(j.id),
  };
}

export type AlertView = ReturnType<typeof viewOf>;

export async function firingAlerts(ctx: AppContext, f: { source?: string; level?: "warn" | "fail" } = {}): Promise<AlertView[]> {
  const rows = (await firingStates(ctx.store, f.source ?? null, f.level ?? null)) as Joined[];
  const silences = await activeSilences(ctx, ctx.clock.now().toISOString());
  return rows.map((r) => viewOf(r, silences.of(r.alert_key)));
}

/**
 * The alerts whose state changed most recently (fired, escalated or resolved), at most `limit`, newest change
 * first: the console's history of what fired and what resolved. Firing ones carry their silence.
 */
export async function recentAlerts(ctx: AppContext, limit: number): Promise<AlertView[]> {
  const rows = (await recentStates(ctx.store, limit)) as Joined[];
  const silences = await activeSilences(ctx, ctx.clock.now().toISOString());
  return rows.map((r) => viewOf(r, r.level === "ok" ? null : silences.of(r.alert_key)));
}

/** Every known alert key with its level (for /metrics), by key. */
export async function alertLevels(ctx: AppContext): Promise<Array<{ key: string; level: AlertLevel }>> {
  return (await stateLevels(ctx.store)) as Array<{ key: string; level: AlertLevel }>;
}

export type AlertNoticeRow = NoticeRow;

/** Evaluations shown on an alert's page, newest first; the export has the rest. */
export const ALERT_HISTORY_SHOWN = 50;
/** Notice attempts and skips shown on a page, newest first; the link-inbox export has the rest. */
export const NOTICES_SHOWN = 50;

/** The notices (link-inbox attempts and skips) of one issue, newest first. */
export function noticesOf(ctx: AppContext, issueId: string): Promise<AlertNoticeRow[]> {
  return noticesOfIssue(ctx.store, issueId, NOTICES_SHOWN);
}

/** One alert by its id (the address in every notice), with its recent evaluations and notices; 404 when unknown. */
export async function alertDetailOrThrow(ctx: AppContext, id: number) {
  const j = found((await stateById(ctx.store, id)) as Joined | null, "alert", id);
  const alert = viewOf(j, (await activeSilences(ctx, ctx.clock.now().toISOString())).of(j.alert_key));
  const history = (await runHistory(ctx.store, j.source, j.name, ALERT_HISTORY_SHOWN)).map((r) => ({ ...r, summary: summaryOf(r.details) }));
  return { alert, history, notices: await noticesOf(ctx, alertIssueId(j.source, j.name)) };
}

/**
 * How much the webhook dead-letter queue grew since `since`: the sum of the positive growths the alerts monitor
 * recorded (pruning can shrink the queue; that is not the queue healing), and the count at the newest run.
 */
export async function deadLetterGrowthSince(ctx: AppContext, since: string): Promise<{ now: number | null; growth: number }> {
  const rows = await runsOfSince(ctx.store, "webhooks", "dead_letter_growth", since);
  let growth = 0;
  for (const r of rows) {
    const g = parseDetails(r.details)?.growth;
    if (typeof g === "number" && g > 0) growth += g;
  }
  const last = rows.at(-1)?.value;
  return { now: last !== undefined && last !== null && /^\d+$/.test(last) ? Number(last) : null, growth };
}
