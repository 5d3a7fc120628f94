import type { AppContext } from "../../context";
import { joinHtml, minuteText, type SafeHtml } from "../../http/formats/html";
import { BADGE_WINDOWS, formatPct } from "./badge";
import { worst, type CheckBase, type Level } from "../checks/types";
import { FRESHNESS_PROOFS, type freshnessCheck } from "../checks/chain";
import { COMPONENT_IDS, COMPONENTS, type ComponentView } from "../components";
import { listIncidents, type IncidentView } from "../incidents/incidents";
import { latencyPercentiles } from "../latency";
import { barsHtml, checkRowHtml, componentHtml, incidentHtml, pageHtml, proofRowHtml, tagHtml, type TagLevel, type TimeData } from "./templates";
import { loadPolicy } from "../checks/policy";
import { systemStatus } from "../service";
import { componentSource, dailyBars, observedSince, uptimeFrom, uptimeSource, type DayBar, type UptimeCache } from "../uptime";

// GET /status: the human status page. Server-rendered HTML with inline CSS — no build step, no JavaScript,
// readable in a text browser. Everything on it comes from the same verbs as the JSON API, so the page and
// the API cannot disagree; this file gathers the data, templates.ts renders it (escaped).

const HEADLINE: Record<Level, string> = {
  ok: "All systems operational",
  warn: "Degraded: some checks need attention",
  bad: "Outage: at least one check is failing",
};
const RECENT_INCIDENT_HOURS = 24 * 14;
const BAR_DAYS = 90;
/** Bars older than this are hidden on narrow screens. */
const NARROW_DAYS = 30;

const tag = (level: TagLevel, text = level === "none" ? "NO DATA" : level.toUpperCase()) => tagHtml({ level, text });
const notConfiguredTag = () => tag("none", "NOT CONFIGURED");
const componentName = (id: string) => COMPONENTS.find((c) => c.id === id)?.name ?? id;
const time = (iso: string): TimeData => ({ iso, text: minuteText(iso) });
const durationText = (minutes: number) =>
  minutes < 120 ? `${Math.round(minutes)} min` : minutes < 2880 ? `${Math.round(minutes / 6) / 10} h` : `${Math.round(minutes / 144) / 10} days`;

/** The 90-day uptime line under the bars: "99.95% uptime", "… since <date>", or why there is none. */
function uptimeLine(pct: number | null, since: string | null, windowStart: number): string {
  if (pct === null) return "no data yet";
  const partial = since !== null && Date.parse(since) > windowStart;
  return `${formatPct(pct)} uptime${partial ? ` since ${minuteText(since)}` : ""}`;
}

function bars(label: string, days: DayBar[], uptime: string, notConfigured = false): SafeHtml {
  return barsHtml({
    label,
    uptime,
    bars: days.map((b, i) => ({
      // A component with nothing to judge is grey all along: green would claim it was verified.
      level: notConfigured ? "none" : b.level,
      text: notConfigured ? `${b.date}: not configured` : b.uptime_pct === null ? `${b.date}: no data` : `${b.date}: ${formatPct(b.uptime_pct)} up`,
      old: i < days.length - NARROW_DAYS,
    })),
  });
}

function incident(i: IncidentView): SafeHtml {
  return incidentHtml({
    id: i.id,
    tag: tag(i.status === "open" ? (i.current_severity ?? i.severity) : i.severity),
    title: i.status === "open" ? i.title : `Resolved: ${i.title}`,
    sourceLabel: i.source === "operator" ? "Reported by the operators" : "Detected by the status checks",
    startedAt: time(i.started_at),
    endedAt: i.ended_at === null ? null : time(i.ended_at),
    duration: durationText(i.duration_minutes),
    components: i.components.map(componentName),
    reasons: Object.entries(i.summary).map(([check, why]) => ({ check, why })),
    updates: i.updates.map((u) => ({ state: u.state, message: u.message, at: time(u.created_at) })),
    open: i.status === "open",
  });
}

function checkRow(name: string, c: CheckBase, uptimePct: number | null): SafeHtml {
  const off = c.configured === false && c.status === "ok";
  return checkRowHtml({
    name,
    rowClass: off ? "row-not-configured" : `row-${c.status}`,
    tag: off ? notConfiguredTag() : tag(c.status),
    summary: c.summary,
    uptime: off ? "—" : uptimePct === null ? "no data" : formatPct(uptimePct),
  });
}

interface UptimeContext {
  checks90: Record<string, { uptime_pct: number | null }>;
  components90: Record<string, { uptime_pct: number | null }>;
  since: string | null;
  windowStart: number;
}

/**
 * A component: its checks' verdict, made worse by an open operator incident that names it (what the operators
 * report is believed even while the checks are green); not configured only when neither says anything.
 */
function component(view: ComponentView, checks: Record<string, CheckBase>, days: DayBar[], u: UptimeContext): SafeHtml {
  const fromChecks = view.status === "not_configured" ? null : view.status;
  const level = fromChecks === null ? view.reported_severity : worst([fromChecks, view.reported_severity ?? "ok"]);
  const off = level === null;
  return componentHtml({
    id: view.id,
    name: view.name,
    description: view.description,
    tag: off ? notConfiguredTag() : tag(level),
    bars: bars(view.name, days, off ? "not configured" : uptimeLine(u.components90[view.id]?.uptime_pct ?? null, u.since, u.windowStart), off),
    rows: joinHtml(view.checks.filter((n) => checks[n]).map((n) => checkRow(n, checks[n]!, u.checks90[n]?.uptime_pct ?? null))),
    open: fromChecks === "warn" || fromChecks === "bad",
  });
}

function proofRows(checks: Record<string, CheckBase>): SafeHtml {
  const rows = (Object.keys(FRESHNESS_PROOFS) as Array<keyof typeof FRESHNESS_PROOFS>).map((name) => {
    // A check that could not be evaluated lacks the proof's fields: show what is known, never throw.
    const c = checks[name] as Partial<Awaited<ReturnType<typeof freshnessCheck>>> & CheckBase;
    const def = FRESHNESS_PROOFS[name];
    const off = c.configured === false && c.status === "ok";
    return proofRowHtml({
      label: def.label,
      tag: off ? notConfiguredTag() : tag(c.status),
      freshness: off ? "" : (c.freshness_status ?? "unknown"),
      age: c.age_hours === null || c.age_hours === undefined ? "—" : `${c.age_hours} h`,
      limit: c.stale_after_hours === undefined ? "—" : `${c.stale_after_hours} h`,
      path: def.path,
    });
  });
  return joinHtml(rows);
}

/**
 * The headline: the checks' overall, unless an open operator incident says worse (an operator who declares an
 * outage is believed, even while every check is green). The JSON `overall` stays the checks' verdict.
 */
function headlineOf(overall: Level, open: IncidentView[]): { level: Level; text: string } {
  const reported = open.filter((i) => i.source === "operator");
  const level = worst([overall, ...reported.map((i) => i.current_severity ?? i.severity)]);
  if (level === overall) return { level, text: HEADLINE[overall] };
  const top = reported.find((i) => (i.current_severity ?? i.severity) === level)!;
  return { level, text: `${level === "bad" ? "Outage" : "Degraded service"} reported: ${top.title}` };
}

export async function statusPage(ctx: AppContext, cache?: UptimeCache): Promise<SafeHtml> {
  const status = await systemStatus(ctx);
  const exclude = loadPolicy(ctx).policy.exclude_maintenance_default;
  const src = await uptimeSource(ctx, 24 * BAR_DAYS, cache);
  const since = await observedSince(ctx);
  const overallBars = dailyBars(src, BAR_DAYS, exclude);
  const components = componentSource(src);
  const componentBars = dailyBars(components, BAR_DAYS, exclude, COMPONENT_IDS);
  const all90 = uptimeFrom(src, 24 * BAR_DAYS, exclude);
  const u: UptimeContext = {
    checks90: all90.checks,
    components90: uptimeFrom(components, 24 * BAR_DAYS, exclude, src.end, COMPONENT_IDS).checks,
    since,
    windowStart: src.end - 24 * BAR_DAYS * 3_600_000,
  };
  const incidents = (await listIncidents(ctx, RECENT_INCIDENT_HOURS, 50)).incidents;
  const open = incidents.filter((i) => i.status === "open");
  const past = incidents.filter((i) => i.status === "resolved");
  const latency = await latencyPercentiles(ctx, 24);
  const checks = status.checks as unknown as Record<string, CheckBase>;
  const head = headlineOf(status.overall, open);
  const windows = Object.entries(BADGE_WINDOWS).map(([key, hours]) => {
    const label = key.replace(/\d+/, "$& "); // the badges' windows, as people read them: "24 h"
    const up = uptimeFrom(src, hours, exclude).overall.uptime_pct;
    const startsBeforeMonitoring = since !== null && Date.parse(since) > src.end - hours * 3_600_000;
    return { label, value: up === null ? "no data" : formatPct(up), since: up !== null && startsBeforeMonitoring ? minuteText(since) : null };
  });
  // Read from latency buckets within 9.05 % (src/http/request-log/latency.ts): shown as such, to two or three figures.
  const ms = (v: number | null) => (v === null ? "—" : `≈ ${v >= 10 ? Math.round(v) : v >= 1 ? v.toFixed(1) : v.toFixed(2)} ms`);
  return pageHtml({
    level: head.level,
    levelText: head.level.toUpperCase(),
    headlineTag: tag(head.level),
    headline: head.text,
    generatedAt: time(status.generated_at),
    policyVersion: status.policy_version,
    lastSnapshot: status.last_snapshot_at === null ? "none yet" : minuteText(status.last_snapshot_at),
    active: open.length ? joinHtml(open.map(incident)) : null,
    maintenance: status.maintenance.windows.map((w) => ({
      tag: tag(w.phase === "active" ? "warn" : "ok", w.phase === "active" ? "ACTIVE" : "PLANNED"),
      title: w.title,
      startsAt: w.starts_at,
      endsAt: w.ends_at,
      phase: w.phase,
      description: w.description,
    })),
    windows,
    excludeMaintenance: exclude,
    overallBars: bars("Overall", overallBars.overall, uptimeLine(all90.overall.uptime_pct, since, u.windowStart)),
    components: joinHtml(status.components.map((v) => component(v, checks, componentBars.checks[v.id]!, u))),
    past: past.length ? joinHtml(past.map(incident)) : null,
    proofs: proofRows(checks),
    latency: {
      p50: ms(latency.overall.p50_ms),
      p95: ms(latency.overall.p95_ms),
      p99: ms(latency.overall.p99_ms),
      samples: latency.overall.samples,
      hours: latency.window.hours,
    },
  });
}
