import { consoleRoute } from "../../console/kit";
import type { Guards } from "../../auth/guards";
import { badge, byteSize, cells, code, dataTable, link, when } from "../../console/frame";
import type { AppContext } from "../../context";
import { compileHtml, type SafeHtml } from "../../http/formats/html";
import { incidentPagePath } from "../link-inbox/notify";
import type { LagState } from "../event-loop-lag";
import { type ProbeState, type ReadinessOverview, readinessOverview } from "./overview";

// GET /admin/ops/readiness: is this deployment ready? One page over the event-loop lag, the synthetic probes, the 403
// noise, the jobs and the backups, with a ready/attention line on top (the rule is readinessSummary in
// overview.ts and docs/operations.md). The data comes from readinessOverview; this file only lays it out.

const STATE_BADGE: Record<ProbeState, string> = { ok: "ok", empty: "warn", failed: "bad", stale: "bad", never: "bad" };
const LAG_BADGE: Record<LagState, string> = { ok: "ok", warn: "warn", bad: "bad", not_measured: "" };

/** The exports the page summarises; all accept the operator session (GET) as well as the bearer token. */
const EXPORTS: ReadonlyArray<readonly [string, string]> = [
  ["403 noise per window and per day (JSON)", "/admin/ops/readiness/403-noise/export.json?days=30&include_windows_meta=1"],
  ["403 noise per window (CSV)", "/admin/ops/readiness/403-noise/export.csv?days=30&mode=summary"],
  ["403 noise per day (CSV)", "/admin/ops/readiness/403-noise/export.csv?days=30"],
  ["Failing or empty probe runs, last 7 days (CSV)", "/admin/ops/readiness/synthetic-zero-history.csv?days=7"],
  ["Event-loop lag, last minute (JSON)", "/admin/ops/readiness/event-loop.json"],
  ["Backups (JSON)", "/admin/backups"],
];

const bodyHtml = compileHtml<{
  o: ReadinessOverview;
  eventLoop: SafeHtml;
  lagWarn: string;
  lagBad: string;
  probes: SafeHtml;
  problems: SafeHtml;
  threshold: string;
  noise: SafeHtml;
  jobs: SafeHtml;
  backups: SafeHtml | null;
  firing: SafeHtml;
  incidents: Array<{ id: number; title: string; severity: string; started: string; page: string }>;
  targets: SafeHtml;
  deadLetters: string;
}>(
  "readiness-page",
  `<p class="muted">Database: <strong id="database-engine"><%= it.o.database.version %></strong>.</p>
<section id="summary" class="summary <%= it.o.summary.ready ? "ready" : "attention" %>"><p><strong id="summary-state"><%= it.o.summary.ready ? "Ready" : "Attention" %></strong>
<% if (it.o.summary.ready) { %>— every probe answers, the 403 noise is within its threshold, no job's latest run failed, <%= it.o.backups.applies ? "a checked backup exists" : "backups are the database's own (not checked here)" %>, no alert is firing, no incident is open and every notification target can be reached.<% } else { %>— <%= it.o.summary.reasons.length %> <%= it.o.summary.reasons.length === 1 ? "thing needs" : "things need" %> a look:<% } %></p>
<% if (!it.o.summary.ready) { %><ul id="summary-reasons"><% for (const r of it.o.summary.reasons) { %><li><%= r %></li><% } %></ul><% } %></section>
<section id="event-loop"><h2>Event loop</h2>
<p class="muted">How late this instance (<code id="event-loop-instance"><%= it.o.instance_id %></code>) ran a timer due every <%= it.o.event_loop.interval_ms %> ms, over the last <%= it.o.event_loop.window_seconds %> seconds: the time every request waited meanwhile. On SQLite every statement runs on this thread, so a backup, a prune or a large export stalls everything. Warn from <%= it.lagWarn %>, bad from <%= it.lagBad %>; shown beside the summary, not judged in it (the HeraldEventLoopStalled alert judges stalls over time).</p>
<% if (it.o.event_loop.state === "not_measured") { %><p id="event-loop-not-measured"><%= it.o.event_loop.sampling ? "No sample yet: the first comes within a second." : "Not measured: only herald serve samples its event loop." %></p><% } else { %><%= it.eventLoop %><% } %></section>
<section id="probes"><h2>Synthetic probes</h2>
<p class="muted">The latest run of each probe (the synthetic-probes job calls Herald's own public endpoints over HTTP).</p>
<%= it.probes %>
<h3>Failing or empty in the last 24 h</h3>
<%= it.problems %></section>
<section id="noise"><h2>403 noise</h2>
<p class="muted">403 answers per 100 requests, from the hourly request-log rollups. Threshold: <%= it.threshold %>.</p>
<%= it.noise %></section>
<section id="jobs"><h2>Jobs</h2><%= it.jobs %></section>
<section id="backups"><h2>Backups</h2>
<% if (!it.o.backups.applies) { %><p id="backups-not-applicable">Herald's on-demand backups and Litestream do not apply on this engine. <%= it.o.backups.note ?? "" %></p><% } else { %>
<p class="muted"><span id="backup-total"><%= it.o.backups.total %></span> in the backups folder; <code>BACKUP_KEEP</code> = <strong id="backup-keep"><%= it.o.backups.keep %></strong> (after each successful backup the oldest beyond this count are deleted).</p>
<% if (it.backups === null) { %><p id="backups-none">No backup yet: run <code>herald backup</code> or <code>POST /admin/backup/run</code>.</p><% } else { %><%= it.backups %><% } %><% } %></section>
<section id="alerting"><h2>Alerts and notifications</h2>
<h3>Firing now</h3>
<%= it.firing %>
<h3>Open incidents</h3>
<% if (it.incidents.length === 0) { %><p class="muted" id="incidents-none">None.</p><% } else { %><ul id="incidents"><% for (const i of it.incidents) { %><li><a href="<%= i.page %>">#<%= i.id %> <%= i.title %></a> <span class="badge <%= i.severity === "bad" ? "bad" : "warn" %>"><%= i.severity %></span> since <%= i.started %></li><% } %></ul><% } %>
<h3>Notification targets</h3>
<%= it.targets %>
<p class="muted" id="dead-letters"><%= it.deadLetters %></p></section>`,
);

const yesNo = (b: boolean) => (b ? "yes" : "no");
const ms = (n: number | null) => (n === null ? null : `${n} ms`);
/** Lag as a person reads it: 0.4 ms, 301.4 ms, 2.04 s. */
const lagMs = (n: number | null) => (n === null ? "–" : n >= 1000 ? `${Number((n / 1000).toFixed(2))} s` : `${n} ms`);

function readinessBody(o: ReadinessOverview) {
  const t = o.noise.threshold;
  const dl = o.alerting.dead_letters;
  const lag = o.event_loop;
  return bodyHtml({
    o,
    lagWarn: lagMs(lag.warn_ms),
    lagBad: lagMs(lag.bad_ms),
    eventLoop: dataTable({
      id: "event-loop-lag",
      rows: [lag],
      columns: {
        State: (l) => badge(LAG_BADGE[l.state], l.state),
        Worst: (l) => lagMs(l.max_ms),
        p99: (l) => lagMs(l.p99_ms),
        Median: (l) => lagMs(l.p50_ms),
        Samples: (l) => l.samples,
      },
    }),
    probes: dataTable({
      id: "probe-latest",
      rows: o.probes.latest,
      rowId: (p) => `probe-${p.probe}`,
      columns: {
        Probe: (p) => code(p.probe),
        State: (p) => badge(STATE_BADGE[p.state], p.state),
        HTTP: (p) => p.run?.status ?? "–",
        Latency: (p) => ms(p.run?.latency_ms ?? null) ?? "–",
        "Had data": (p) => (p.run ? yesNo(p.run.had_data) : "–"),
        OK: (p) => (p.run ? yesNo(p.run.ok) : "–"),
        "Ran at": (p) => when(p.run?.at ?? null) ?? "never",
        Error: { class: "err", cell: (p) => p.run?.error ?? "" },
      },
    }),
    problems: dataTable({
      id: "probe-problems",
      rows: o.probes.problems,
      empty: "None.",
      columns: {
        At: (r) => when(r.at),
        Probe: (r) => code(r.probe),
        Outcome: (r) => badge(r.ok ? "warn" : "bad", r.ok ? "empty" : "failed"),
        HTTP: (r) => r.status ?? "–",
        Latency: (r) => ms(r.latency_ms) ?? "–",
        Error: { class: "err", cell: (r) => r.error ?? "" },
      },
    }),
    threshold: `at most ${t.max_percent} %${t.max_per_hour === null ? "" : ` and at most ${t.max_per_hour} per hour`}`,
    noise: dataTable({
      rows: o.noise.windows,
      rowId: (w) => `noise-${w.window_days}`,
      columns: {
        Window: (w) => `${w.window_days} days`,
        Requests: (w) => w.requests,
        "403s": (w) => w.forbidden,
        Noise: (w) => (w.noise_percent === null ? "no requests" : `${w.noise_percent} %`),
        "403s per hour": (w) => w.forbidden_per_hour,
        Verdict: (w) => badge(w.within_threshold ? "ok" : "bad", w.within_threshold ? "within" : "over"),
      },
    }),
    jobs: dataTable({
      rows: o.jobs,
      rowId: (j) => `job-${j.name}`,
      columns: {
        Job: (j) => cells(code(j.name), j.enabled ? null : badge("", "disabled")),
        Schedule: (j) => code(j.pattern),
        "Last run": (j) => when(j.last_run?.started_at ?? null) ?? "never",
        Outcome: (j) => {
          const ok = j.last_run?.ok;
          return badge(ok === false ? "bad" : ok ? "ok" : "", !j.last_run ? "never ran" : ok === null ? "running" : ok ? "ok" : "failed");
        },
        "Failures, 24 h": { class: (j) => (j.failures_24h > 0 ? "warn" : ""), cell: (j) => j.failures_24h },
      },
    }),
    backups: o.backups.newest.length
      ? dataTable({
          rows: o.backups.newest,
          rowId: (b) => `backup-${b.name}`,
          columns: {
            Name: (b) => code(b.name),
            Size: (b) => byteSize(b.size_bytes),
            Created: (b) => when(b.created_at),
            Integrity: (b) => badge(b.integrity === "ok" ? "ok" : "warn", b.integrity),
          },
        })
      : null,
    firing: dataTable({
      id: "firing",
      rows: o.alerting.firing,
      empty: "Nothing is firing.",
      columns: {
        Alert: (f) => link(f.page, code(f.key)),
        Level: (f) => badge(f.level === "fail" ? "bad" : "warn", f.level),
        Since: (f) => when(f.fired_at ?? f.since),
        Summary: (f) => f.summary ?? "",
        Silenced: (f) => (f.silenced_by ? `until ${when(f.silenced_by.ends_at)} (${f.silenced_by.created_by})` : "no"),
      },
    }),
    incidents: o.alerting.open_incidents.map((i) => ({
      id: i.id,
      title: i.title,
      severity: i.severity,
      started: when(i.started_at)!,
      page: incidentPagePath(i.id),
    })),
    targets: dataTable({
      id: "targets",
      rows: o.alerting.targets,
      empty: "No link-inbox target configured (LINK_INBOX_WEBHOOK_URLS).",
      columns: {
        Target: (x) => code(x.target),
        State: (x) => badge(x.dead ? "bad" : x.state === "down" ? "warn" : "ok", x.dead ? "dead" : x.state),
        Reason: { class: "err", cell: (x) => x.reason ?? "" },
        "Last success": (x) => when(x.last_success_at) ?? "never",
      },
    }),
    deadLetters: `Webhook dead letters: ${dl.now ?? "not measured yet"}${dl.growth_24h > 0 ? `, +${dl.growth_24h} in the last 24 h` : ", no growth in the last 24 h"} (the alerts-monitor job measures them every 15 minutes).`,
  });
}

export function readinessPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: "/admin/ops/readiness",
    title: "Readiness",
    lead: "Is this deployment ready?",
    summary: "Readiness (HTML page): event-loop lag, synthetic probes, 403 noise per window, jobs, backups and a ready/attention summary",
    load: () => readinessOverview(ctx),
    view: readinessBody,
    // The backups list answers 409 on PostgreSQL: not linked there.
    exports: (o) => ({ links: o.backups.applies ? EXPORTS : EXPORTS.filter(([, href]) => href !== "/admin/backups") }),
  });
}
