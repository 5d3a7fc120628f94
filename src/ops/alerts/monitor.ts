import type { AppContext } from "../../context";
import { systemStatus } from "../../status/service";
import { auditAlertsAfter } from "../../transparency/audit-service";
import { deadLetterTotal } from "../../webhooks/service";
import { type AlertInput, type AlertStatus, lastAlertRun, newAlertRunId, recordAlertRun } from "./service";
import { digestAlerts } from "./digest-alerts";

// The alerts-monitor job: records, one row per alert per run, what each domain's service already judges (the status
// checks, the transparency alerts of every audit run since the last evaluation, the 403 digest's findings); only
// dead-letter growth is computed here. Rows are applied as recorded, so a notice is queued in the run that saw the change.

export const ALERTS_MONITOR_JOB = "alerts-monitor";
/** Every 15 minutes: often enough to see a dead-letter burst within a shift, rare enough to keep the table small. */
export const ALERTS_MONITOR_CRON = "*/15 * * * *";
export const DEAD_LETTER_ALERT = "dead_letter_growth";

const fromLevel = (l: string): AlertStatus => (l === "bad" ? "fail" : l === "warn" ? "warn" : "ok");

async function statusAlerts(ctx: AppContext): Promise<AlertInput[]> {
  const s = await systemStatus(ctx);
  const out: AlertInput[] = [{ name: "overall", status: fromLevel(s.overall), value: s.overall, details: { policy_version: s.policy_version } }];
  for (const [name, check] of Object.entries(s.checks as Record<string, { status: string; summary?: string; configured?: boolean }>)) {
    out.push({ name, status: fromLevel(check.status), value: check.status, details: { summary: check.summary ?? null, configured: check.configured ?? true } });
  }
  return out;
}

/**
 * Every complete audit run since the one the previous evaluation judged, oldest first, one row each: a bad run
 * followed seconds later by a clean one is two rows (fail, then ok) — the alert fires and resolves — where reading
 * only the latest run saw nothing. Nothing new: the latest run again.
 */
async function transparencyAlerts(ctx: AppContext): Promise<AlertInput[]> {
  // The first evaluation ever judges the latest run only (no replay of history); one that found no run yet
  // leaves every run after it to judge.
  const previous = (await lastAlertRun(ctx, "transparency", "audit_anomalies"))?.details ?? null;
  const after = previous === null ? null : typeof previous.selected_run === "number" ? previous.selected_run : 0;
  const answers = await auditAlertsAfter(ctx, after);
  return answers.map((a) => {
    const s = a.snapshot;
    return {
      name: "audit_anomalies",
      status: fromLevel(s.alert_level),
      value: a.selected_run === null ? "no_run" : s.alert_level,
      details: { selected_run: a.selected_run, evaluated_at: a.evaluated_at, reasons: s.reasons, thresholds: s.thresholds },
    };
  });
}

/**
 * Growth since the previous run; on the first run ever, since zero — dead letters already there when monitoring
 * starts are dead letters nobody has looked at (`previous` stays null in the details: there was no run).
 */
async function webhookAlerts(ctx: AppContext): Promise<AlertInput[]> {
  const now = await deadLetterTotal(ctx);
  const prevRaw = (await lastAlertRun(ctx, "webhooks", DEAD_LETTER_ALERT))?.value ?? null;
  const previous = prevRaw === null || !/^\d+$/.test(prevRaw) ? null : Number(prevRaw);
  const growth = now - (previous ?? 0);
  const summary =
    `${now} webhook dead letter${now === 1 ? "" : "s"} kept` +
    (growth > 0
      ? `, ${growth} new since ${previous === null ? "monitoring began" : "the last run"}`
      : growth < 0
        ? `, ${-growth} fewer than at the last run`
        : ", none new");
  return [{ name: DEAD_LETTER_ALERT, status: growth > 0 ? "warn" : "ok", value: now, details: { summary, dead_letters: now, previous, growth } }];
}

const EVALUATORS: ReadonlyArray<readonly [string, (ctx: AppContext) => AlertInput[] | Promise<AlertInput[]>]> = [
  ["status", statusAlerts],
  ["transparency", transparencyAlerts],
  ["webhooks", webhookAlerts],
  ["digest", digestAlerts],
];

/**
 * One monitor run: each source evaluated and recorded under one run id. A source that throws is recorded as one
 * `evaluation_error` fail row rather than taking the other sources down with it.
 */
export async function runAlertsMonitor(ctx: AppContext) {
  const runId = newAlertRunId(ctx);
  const at = ctx.clock.now().toISOString();
  const recorded: Array<{ source: string; count: number; fail: number; warn: number }> = [];
  for (const [source, evaluate] of EVALUATORS) {
    let alerts: AlertInput[];
    try {
      alerts = await evaluate(ctx);
    } catch (err) {
      alerts = [{ name: "evaluation_error", status: "fail", value: null, details: { error: err instanceof Error ? err.message : String(err) } }];
    }
    await recordAlertRun(ctx, { source, alerts, runId, at });
    recorded.push({
      source,
      count: alerts.length,
      fail: alerts.filter((a) => a.status === "fail").length,
      warn: alerts.filter((a) => a.status === "warn").length,
    });
  }
  return { run_id: runId, at, sources: recorded };
}

export function registerAlertsMonitorJob(ctx: AppContext): void {
  ctx.jobs.register({
    name: ALERTS_MONITOR_JOB,
    pattern: ALERTS_MONITOR_CRON,
    description:
      "Records the status checks, the transparency audit alert (every audit run since the last evaluation), webhook dead-letter growth and the 403 digest's findings as alert runs (ops_alert_runs), every 15 minutes, and queues the notices of their state changes",
    run: async () => {
      const r = await runAlertsMonitor(ctx);
      const failing = r.sources.filter((s) => s.fail > 0).map((s) => s.source);
      if (failing.length) ctx.log.warn("alerts monitor: failing alerts", { run_id: r.run_id, failing });
      else ctx.log.info("alerts monitor ran", { run_id: r.run_id });
    },
  });
}
