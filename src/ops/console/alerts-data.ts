import { when } from "../../auth/console-kit";
import type { AppContext } from "../../context";
import type { SafeHtml } from "../../http/html";
import { parsePage } from "../../http/pagination";
import { alertsExport } from "../alerts/export";
import { ALERTS_DEFAULTS } from "../alerts/model";
import { ALERT_SOURCES, ALERT_STATUSES } from "../alerts/service";
import { listSilences, MAX_SILENCE_DAYS, type Silence } from "../alerts/silences";
import { summaryOf } from "../alerts/state";
import { type AlertView, recentAlerts } from "../alerts/views";
import { ALERTS_PATH, type AlertRowView, type AlertsPageData, type Pager, type SilenceRowView } from "./alerts-view";

// What the alerts page shows, read through the alerts area's own read verbs (views.ts, silences.ts, export.ts):
// no SQL here. The page's query is read leniently (strings, as a GET form sends them, empty = default) and a
// value out of bounds becomes an error line on the page (400), never a JSON answer in a browser tab.

const BASE = "/admin/ops/alerts-monitor";
/** Alerts (state rows) read for the changes list and the key → page map; Herald has a few dozen alert keys. */
const STATES_MAX = 500;
const CHANGES_PAGE = 25;
const RUNS_PAGE = 25;
const RUNS_MAX_DAYS = 90;
const RUNS_MAX_OFFSET = 1_000_000;
const ACTIVE_SHOWN = 100;
const ENDED_PAGE = 10;

const BADGE: Record<string, string> = { ok: "ok", warn: "warn", fail: "bad" };
const SOURCES = ["all", ...ALERT_SOURCES];
const STATUSES = ["all", ...ALERT_STATUSES];

export interface AlertsQuery {
  /** Offset into the recent changes. */
  changes: number;
  days: number;
  source: string;
  status: string;
  /** Offset into the evaluations (export.json's offset). */
  runs: number;
  /** The recently-ended silences' cursor (the silences list's next_cursor), or null for the newest. */
  ended: string | null;
}

export type RawAlertsQuery = Partial<Record<"changes" | "days" | "source" | "status" | "runs" | "ended", string>>;

const DEFAULTS: AlertsQuery = { changes: 0, days: ALERTS_DEFAULTS.days, source: "all", status: "all", runs: 0, ended: null };

/** The page's query, each bad value replaced by its default and named in `error`. */
export function parseAlertsQuery(raw: RawAlertsQuery): { q: AlertsQuery; error: string | null } {
  const problems: string[] = [];
  const int = (name: keyof RawAlertsQuery, min: number, max: number, fallback: number, what: string) => {
    const v = raw[name]?.trim() ?? "";
    if (v === "") return fallback;
    const n = /^\d{1,9}$/.test(v) ? Number(v) : Number.NaN;
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    problems.push(`${what} must be a whole number from ${min} to ${max}`);
    return fallback;
  };
  const oneOf = (name: "source" | "status", list: string[]) => {
    const v = raw[name] ?? "";
    if (v === "" || list.includes(v)) return v || "all";
    problems.push(`${name} must be one of ${list.join(", ")}`);
    return "all";
  };
  let ended: string | null = raw.ended || null;
  if (ended !== null) {
    try {
      parsePage({ cursor: ended });
    } catch {
      problems.push("the Older link of the ended silences is stale or mangled; showing the newest");
      ended = null;
    }
  }
  const q: AlertsQuery = {
    changes: int("changes", 0, STATES_MAX - 1, 0, "the changes offset"),
    days: int("days", 1, RUNS_MAX_DAYS, DEFAULTS.days, "Days"),
    source: oneOf("source", SOURCES),
    status: oneOf("status", STATUSES),
    runs: int("runs", 0, RUNS_MAX_OFFSET, 0, "the evaluations offset"),
    ended,
  };
  return { q, error: problems.length ? `Shown with defaults instead: ${problems.join("; ")}.` : null };
}

/** The page's own address with `patch` applied (defaults left out), at `anchor`. */
function hrefOf(q: AlertsQuery, patch: Partial<AlertsQuery>, anchor: string): string {
  const next = { ...q, ...patch };
  const params = new URLSearchParams();
  for (const key of Object.keys(DEFAULTS) as Array<keyof AlertsQuery>) {
    if (next[key] !== DEFAULTS[key] && next[key] !== null) params.set(key, String(next[key]));
  }
  const s = params.toString();
  return `${ALERTS_PATH}${s ? `?${s}` : ""}#${anchor}`;
}

function pagerOf(
  q: AlertsQuery,
  field: "changes" | "runs",
  offset: number,
  shown: number,
  total: number | null,
  pageSize: number,
  hasMore: boolean,
  anchor: string,
): Pager {
  const range = shown === 0 ? "" : `${offset + 1}–${offset + shown}${total !== null ? ` of ${total}` : ""}`;
  return {
    range,
    newer: offset > 0 ? hrefOf(q, { [field]: Math.max(0, offset - pageSize) }, anchor) : null,
    older: hasMore ? hrefOf(q, { [field]: offset + shown }, anchor) : null,
  };
}

const silencedText = (s: AlertView["silenced_by"]) => (s ? `#${s.id} by ${s.created_by} until ${when(s.ends_at)}: ${s.reason}` : null);

export const alertRow = (a: AlertView): AlertRowView => ({
  key: a.key,
  page: a.page,
  level: a.level,
  badge: BADGE[a.level] ?? "",
  since: when(a.fired_at ?? a.since)!,
  summary: a.summary ?? "",
  silenced: silencedText(a.silenced_by),
});

const changeOf = (a: AlertView) =>
  a.level === "ok"
    ? a.resolved_at
      ? `resolved ${when(a.resolved_at)}${a.fired_at ? ` (fired ${when(a.fired_at)})` : ""}`
      : `ok since ${when(a.since)}`
    : `${a.level} since ${when(a.since)}`;

const silenceRow = (s: Silence): SilenceRowView => ({
  id: s.id,
  matcher: s.matcher,
  reason: s.reason,
  by: s.created_by,
  at: when(s.created_at)!,
  until: s.expired_at ? `ended ${when(s.expired_at)} by ${s.expired_by ?? "?"} (was until ${when(s.ends_at)})` : when(s.ends_at)!,
  state: s.state,
  badge: s.state === "active" ? "warn" : "",
});

/** What the silence form shows: a refused form's own values again, or the defaults. */
export interface SilenceFormValues {
  matcher: string;
  reason: string;
  hours: string;
  until: string;
}

export const EMPTY_FORM: SilenceFormValues = { matcher: "", reason: "", hours: "4", until: "" };

/** `2026-04-01T12:00` (a datetime-local input's value, read as UTC) from a time. */
const localMinute = (ms: number) => new Date(ms).toISOString().slice(0, 16);

export async function alertsPageData(
  ctx: AppContext,
  input: { q: AlertsQuery; notice: SafeHtml; form: SilenceFormValues; csrf: string | null; firing: AlertView[] },
): Promise<AlertsPageData> {
  const { q } = input;
  const now = ctx.clock.now();
  const states = await recentAlerts(ctx, STATES_MAX);
  const pageOfKey = new Map(states.map((a) => [a.key, a.page]));
  const changes = states.slice(q.changes, q.changes + CHANGES_PAGE);

  const filter = { days: q.days, source: q.source as "all", status: q.status as "all" };
  const runs = await alertsExport(ctx, { ...filter, limit: RUNS_PAGE, offset: q.runs });
  const windowQuery = new URLSearchParams({ days: String(q.days), source: q.source, status: q.status }).toString();

  const active = await listSilences(ctx, { limit: ACTIVE_SHOWN, offset: 0, after: null, cursor: null }, "active");
  const ended = await listSilences(ctx, { ...parsePage({ cursor: q.ended ?? undefined }), limit: ENDED_PAGE }, "expired");

  return {
    generatedAt: when(now.toISOString())!,
    notice: input.notice,
    firing: input.firing.map(alertRow),
    changes: changes.map((a) => ({ ...alertRow(a), change: changeOf(a) })),
    changesPager: pagerOf(q, "changes", q.changes, changes.length, states.length, CHANGES_PAGE, q.changes + changes.length < states.length, "history"),
    runs: runs.alerts.map((r) => {
      const key = `${r.source}:${r.name}`;
      return {
        at: when(r.at)!,
        key,
        page: pageOfKey.get(key) ?? null,
        status: r.status,
        badge: BADGE[r.status] ?? "",
        value: r.value ?? "",
        summary: summaryOf(r.details) ?? "",
        run: r.run_id,
      };
    }),
    runsPager: pagerOf(q, "runs", q.runs, runs.count, runs.total, RUNS_PAGE, runs.pagination.has_more, "runs"),
    runsJson: `${BASE}/export.json?${windowQuery}&limit=${RUNS_PAGE}&offset=${q.runs}`,
    runsFilter: { days: q.days, maxDays: RUNS_MAX_DAYS, source: q.source, status: q.status, sources: SOURCES, statuses: STATUSES },
    active: active.items.map(silenceRow),
    activeMore: active.pagination.has_more,
    ended: ended.items.map(silenceRow),
    endedNewest: q.ended !== null ? hrefOf(q, { ended: null }, "silences") : null,
    endedOlder: ended.pagination.next_cursor !== null ? hrefOf(q, { ended: ended.pagination.next_cursor }, "silences") : null,
    form: {
      ...input.form,
      maxHours: MAX_SILENCE_DAYS * 24,
      minUntil: localMinute(now.getTime()),
      maxUntil: localMinute(now.getTime() + MAX_SILENCE_DAYS * 86_400_000),
    },
    csrf: input.csrf,
    exports: [
      ["Firing now (JSON)", `${BASE}/firing.json`],
      ["Active silences (JSON)", `${BASE}/silences?state=active`],
      ["Every silence, newest first (JSON, paged)", `${BASE}/silences`],
      [`Evaluations, last ${q.days} days (JSON, paged)`, `${BASE}/export.json?${windowQuery}`],
      [`Alert runs, last ${q.days} days (CSV)`, `${BASE}/runs/export?${windowQuery}`],
      [`Everything of the last ${q.days} days (ZIP: alerts.json, alerts.csv, runs.csv, manifest.json)`, `${BASE}/export.zip?${windowQuery}`],
      ["Export downloads per day (JSON)", `${BASE}/export-usage.json`],
      ["Export downloads per day (CSV)", `${BASE}/export-usage.csv`],
      ["Export downloads per day (PNG chart)", `${BASE}/export-usage.png`],
      ["Export downloads per day (SVG chart)", `${BASE}/export-usage.svg`],
      ["Link-inbox targets: who notices reach (JSON)", "/admin/ops/link-inbox/targets.json"],
    ],
  };
}
