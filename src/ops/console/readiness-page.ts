import { Elysia } from "elysia";
import { actorLabel } from "../../auth/actors";
import type { Guards } from "../../auth/guards";
import { byteSize, when, notSignedInDoc } from "../../auth/console-kit";
import { operatorPage, operatorPageResponse } from "../../auth/operator-page";
import type { AppContext } from "../../context";
import { compileHtml } from "../../http/html";
import { incidentPagePath } from "../link-inbox/notify";
import { type ProbeState, type ReadinessOverview, readinessOverview } from "../readiness/overview";

// GET /admin/ops/readiness: is this deployment ready? One page over the synthetic probes, the 403 noise, the jobs
// and the backups, with a ready/attention line on top (the rule is readinessSummary in readiness-overview.ts and
// docs/operations.md). The data comes from readinessOverview; this file only lays it out. Every table cell carries
// its column name in data-label, which the narrow layout (src/auth/operator-page.ts) prints before the value.

const STATE_BADGE: Record<ProbeState, string> = { ok: "ok", empty: "warn", failed: "bad", stale: "bad", never: "bad" };

/** The exports the page summarises; all accept the operator session (GET) as well as the bearer token. */
const EXPORTS: ReadonlyArray<readonly [string, string]> = [
  ["403 noise per window and per day (JSON)", "/admin/ops/readiness/403-noise/export.json?days=30&include_windows_meta=1"],
  ["403 noise per window (CSV)", "/admin/ops/readiness/403-noise/export.csv?days=30&mode=summary"],
  ["403 noise per day (CSV)", "/admin/ops/readiness/403-noise/export.csv?days=30"],
  ["Failing or empty probe runs, last 7 days (CSV)", "/admin/ops/readiness/synthetic-zero-history.csv?days=7"],
  ["Backups (JSON)", "/admin/backups"],
];

interface PageData {
  generatedAt: string;
  /** "SQLite 3.51.0" or "PostgreSQL 15.18": which engine this instance runs on. */
  database: string;
  backupsApply: boolean;
  backupsNote: string | null;
  summary: ReadinessOverview["summary"];
  exports: ReadonlyArray<readonly [string, string]>;
  probes: Array<{
    probe: string;
    state: ProbeState;
    badge: string;
    status: number | null;
    latency: string | null;
    hadData: string | null;
    ok: string | null;
    at: string | null;
    error: string | null;
  }>;
  problems: Array<{ at: string; probe: string; outcome: string; status: number | null; latency: string | null; error: string | null }>;
  threshold: string;
  noise: Array<{ days: number; requests: number; forbidden: number; percent: string; perHour: number; within: boolean }>;
  jobs: Array<{ name: string; pattern: string; enabled: boolean; at: string | null; outcome: string; badge: string; failures: number }>;
  backups: Array<{ name: string; size: string; createdAt: string; integrity: string }>;
  backupTotal: number;
  keep: number;
  firing: Array<{ key: string; level: string; badge: string; since: string; page: string; silenced: string | null; summary: string | null }>;
  incidents: Array<{ id: number; title: string; severity: string; started: string; page: string }>;
  targets: Array<{ target: string; state: string; badge: string; reason: string | null; lastSuccess: string | null }>;
  deadLetters: string;
}

const bodyHtml = compileHtml<PageData>(
  "readiness-page",
  `<h1>Readiness</h1>
<p class="lead">Is this deployment ready? As of <%= it.generatedAt %>; all times UTC. Database: <strong id="database-engine"><%= it.database %></strong>.</p>
<section id="summary" class="summary <%= it.summary.ready ? "ready" : "attention" %>"><p><strong id="summary-state"><%= it.summary.ready ? "Ready" : "Attention" %></strong>
<% if (it.summary.ready) { %>— every probe answers, the 403 noise is within its threshold, no job's latest run failed, <%= it.backupsApply ? "a checked backup exists" : "backups are the database's own (not checked here)" %>, no alert is firing, no incident is open and every notification target can be reached.<% } else { %>— <%= it.summary.reasons.length %> <%= it.summary.reasons.length === 1 ? "thing needs" : "things need" %> a look:<% } %></p>
<% if (!it.summary.ready) { %><ul id="summary-reasons"><% for (const r of it.summary.reasons) { %><li><%= r %></li><% } %></ul><% } %></section>

<section id="probes"><h2>Synthetic probes</h2>
<p class="muted">The latest run of each probe (the synthetic-probes job calls Herald's own public endpoints over HTTP).</p>
<table class="data" id="probe-latest"><thead><tr><th>Probe</th><th>State</th><th>HTTP</th><th>Latency</th><th>Had data</th><th>OK</th><th>Ran at</th><th>Error</th></tr></thead><tbody>
<% for (const p of it.probes) { %><tr id="probe-<%= p.probe %>"><td data-label="Probe"><code><%= p.probe %></code></td><td data-label="State"><span class="badge <%= p.badge %>"><%= p.state %></span></td><td data-label="HTTP"><%= p.status ?? "–" %></td><td data-label="Latency"><%= p.latency ?? "–" %></td><td data-label="Had data"><%= p.hadData ?? "–" %></td><td data-label="OK"><%= p.ok ?? "–" %></td><td data-label="Ran at"><%= p.at ?? "never" %></td><td data-label="Error" class="err"><%= p.error ?? "" %></td></tr>
<% } %></tbody></table>
<h3>Failing or empty in the last 24 h</h3>
<% if (it.problems.length === 0) { %><p class="muted" id="probe-problems-none">None.</p><% } else { %><table class="data" id="probe-problems"><thead><tr><th>At</th><th>Probe</th><th>Outcome</th><th>HTTP</th><th>Latency</th><th>Error</th></tr></thead><tbody>
<% for (const p of it.problems) { %><tr><td data-label="At"><%= p.at %></td><td data-label="Probe"><code><%= p.probe %></code></td><td data-label="Outcome"><span class="badge <%= p.outcome === "failed" ? "bad" : "warn" %>"><%= p.outcome %></span></td><td data-label="HTTP"><%= p.status ?? "–" %></td><td data-label="Latency"><%= p.latency ?? "–" %></td><td data-label="Error" class="err"><%= p.error ?? "" %></td></tr>
<% } %></tbody></table><% } %></section>

<section id="noise"><h2>403 noise</h2>
<p class="muted">403 answers per 100 requests, from the hourly request-log rollups. Threshold: <%= it.threshold %>.</p>
<table class="data"><thead><tr><th>Window</th><th>Requests</th><th>403s</th><th>Noise</th><th>403s per hour</th><th>Verdict</th></tr></thead><tbody>
<% for (const w of it.noise) { %><tr id="noise-<%= w.days %>"><td data-label="Window"><%= w.days %> days</td><td data-label="Requests"><%= w.requests %></td><td data-label="403s"><%= w.forbidden %></td><td data-label="Noise"><%= w.percent %></td><td data-label="403s per hour"><%= w.perHour %></td><td data-label="Verdict"><span class="badge <%= w.within ? "ok" : "bad" %>"><%= w.within ? "within" : "over" %></span></td></tr>
<% } %></tbody></table></section>

<section id="jobs"><h2>Jobs</h2>
<table class="data"><thead><tr><th>Job</th><th>Schedule</th><th>Last run</th><th>Outcome</th><th>Failures, 24 h</th></tr></thead><tbody>
<% for (const j of it.jobs) { %><tr id="job-<%= j.name %>"><td data-label="Job"><code><%= j.name %></code><% if (!j.enabled) { %> <span class="badge">disabled</span><% } %></td><td data-label="Schedule"><code><%= j.pattern %></code></td><td data-label="Last run"><%= j.at ?? "never" %></td><td data-label="Outcome"><span class="badge <%= j.badge %>"><%= j.outcome %></span></td><td data-label="Failures, 24 h"<% if (j.failures > 0) { %> class="warn"<% } %>><%= j.failures %></td></tr>
<% } %></tbody></table></section>

<section id="backups"><h2>Backups</h2>
<% if (!it.backupsApply) { %><p id="backups-not-applicable">Herald's on-demand backups and Litestream do not apply on this engine. <%= it.backupsNote ?? "" %></p><% } else { %>
<p class="muted"><span id="backup-total"><%= it.backupTotal %></span> in the backups folder; <code>BACKUP_KEEP</code> = <strong id="backup-keep"><%= it.keep %></strong> (after each successful backup the oldest beyond this count are deleted).</p>
<% if (it.backups.length === 0) { %><p id="backups-none">No backup yet: run <code>herald backup</code> or <code>POST /admin/backup/run</code>.</p><% } else { %><table class="data"><thead><tr><th>Name</th><th>Size</th><th>Created</th><th>Integrity</th></tr></thead><tbody>
<% for (const b of it.backups) { %><tr id="backup-<%= b.name %>"><td data-label="Name"><code><%= b.name %></code></td><td data-label="Size"><%= b.size %></td><td data-label="Created"><%= b.createdAt %></td><td data-label="Integrity"><span class="badge <%= b.integrity === "ok" ? "ok" : "warn" %>"><%= b.integrity %></span></td></tr>
<% } %></tbody></table><% } %><% } %></section>

<section id="alerting"><h2>Alerts and notifications</h2>
<h3>Firing now</h3>
<% if (it.firing.length === 0) { %><p class="muted" id="firing-none">Nothing is firing.</p><% } else { %><table class="data" id="firing"><thead><tr><th>Alert</th><th>Level</th><th>Since</th><th>Summary</th><th>Silenced</th></tr></thead><tbody>
<% for (const f of it.firing) { %><tr><td data-label="Alert"><a href="<%= f.page %>"><code><%= f.key %></code></a></td><td data-label="Level"><span class="badge <%= f.badge %>"><%= f.level %></span></td><td data-label="Since"><%= f.since %></td><td data-label="Summary"><%= f.summary ?? "" %></td><td data-label="Silenced"><%= f.silenced ?? "no" %></td></tr>
<% } %></tbody></table><% } %>
<h3>Open incidents</h3>
<% if (it.incidents.length === 0) { %><p class="muted" id="incidents-none">None.</p><% } else { %><ul id="incidents"><% for (const i of it.incidents) { %><li><a href="<%= i.page %>">#<%= i.id %> <%= i.title %></a> <span class="badge <%= i.severity === "bad" ? "bad" : "warn" %>"><%= i.severity %></span> since <%= i.started %></li><% } %></ul><% } %>
<h3>Notification targets</h3>
<% if (it.targets.length === 0) { %><p class="muted" id="targets-none">No link-inbox target configured (LINK_INBOX_WEBHOOK_URLS).</p><% } else { %><table class="data" id="targets"><thead><tr><th>Target</th><th>State</th><th>Reason</th><th>Last success</th></tr></thead><tbody>
<% for (const x of it.targets) { %><tr><td data-label="Target"><code><%= x.target %></code></td><td data-label="State"><span class="badge <%= x.badge %>"><%= x.state %></span></td><td data-label="Reason" class="err"><%= x.reason ?? "" %></td><td data-label="Last success"><%= x.lastSuccess ?? "never" %></td></tr>
<% } %></tbody></table><% } %>
<p class="muted" id="dead-letters"><%= it.deadLetters %></p></section>

<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

const yesNo = (b: boolean) => (b ? "yes" : "no");
const ms = (n: number | null) => (n === null ? null : `${n} ms`);

/** The page body for an overview (exported so tests can render planted data without a server). */
export function readinessBody(o: ReadinessOverview) {
  const t = o.noise.threshold;
  return bodyHtml({
    generatedAt: when(o.generated_at)!,
    database: o.database.version,
    backupsApply: o.backups.applies,
    backupsNote: o.backups.note,
    summary: o.summary,
    // The backups list answers 409 on PostgreSQL: not linked there.
    exports: o.backups.applies ? EXPORTS : EXPORTS.filter(([, href]) => href !== "/admin/backups"),
    probes: o.probes.latest.map(({ probe, run, state }) => ({
      probe,
      state,
      badge: STATE_BADGE[state],
      status: run?.status ?? null,
      latency: ms(run?.latency_ms ?? null),
      hadData: run ? yesNo(run.had_data) : null,
      ok: run ? yesNo(run.ok) : null,
      at: when(run?.at ?? null),
      error: run?.error ?? null,
    })),
    problems: o.probes.problems.map((r) => ({
      at: when(r.at)!,
      probe: r.probe,
      outcome: r.ok ? "empty" : "failed",
      status: r.status,
      latency: ms(r.latency_ms),
      error: r.error,
    })),
    threshold: `at most ${t.max_percent} %${t.max_per_hour === null ? "" : ` and at most ${t.max_per_hour} per hour`}`,
    noise: o.noise.windows.map((w) => ({
      days: w.window_days,
      requests: w.requests,
      forbidden: w.forbidden,
      percent: w.noise_percent === null ? "no requests" : `${w.noise_percent} %`,
      perHour: w.forbidden_per_hour,
      within: w.within_threshold,
    })),
    jobs: o.jobs.map((j) => {
      const ok = j.last_run?.ok;
      return {
        name: j.name,
        pattern: j.pattern,
        enabled: j.enabled,
        at: when(j.last_run?.started_at ?? null),
        outcome: !j.last_run ? "never ran" : ok === null ? "running" : ok ? "ok" : "failed",
        badge: ok === false ? "bad" : ok ? "ok" : "",
        failures: j.failures_24h,
      };
    }),
    backups: o.backups.newest.map((b) => ({ name: b.name, size: byteSize(b.size_bytes), createdAt: when(b.created_at)!, integrity: b.integrity })),
    backupTotal: o.backups.total,
    keep: o.backups.keep,
    firing: o.alerting.firing.map((f) => ({
      key: f.key,
      level: f.level,
      badge: f.level === "fail" ? "bad" : "warn",
      since: when(f.fired_at ?? f.since)!,
      page: f.page,
      silenced: f.silenced_by ? `until ${when(f.silenced_by.ends_at)} (${f.silenced_by.created_by})` : null,
      summary: f.summary,
    })),
    incidents: o.alerting.open_incidents.map((i) => ({
      id: i.id,
      title: i.title,
      severity: i.severity,
      started: when(i.started_at)!,
      page: incidentPagePath(i.id),
    })),
    targets: o.alerting.targets.map((x) => ({
      target: x.target,
      state: x.dead ? "dead" : x.state,
      badge: x.dead ? "bad" : x.state === "down" ? "warn" : "ok",
      reason: x.reason,
      lastSuccess: when(x.last_success_at),
    })),
    deadLetters: `Webhook dead letters: ${o.alerting.dead_letters.now ?? "not measured yet"}${o.alerting.dead_letters.growth_24h > 0 ? `, +${o.alerting.dead_letters.growth_24h} in the last 24 h` : ", no growth in the last 24 h"} (the alerts-monitor job measures them every 15 minutes).`,
  });
}

/** GET /admin/ops/readiness, composed into operatorPagesRoutes (src/ops/console/config-page.ts). */
export function readinessPageRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:ops-readiness-page" }).use(guards.operator.plugin).get(
    "/admin/ops/readiness",
    async ({ operator }) =>
      operatorPageResponse(
        operatorPage({
          title: "Readiness · Herald",
          current: "/admin/ops/readiness",
          who: actorLabel(operator.actor),
          csrfToken: operator.csrfToken,
          body: readinessBody(await readinessOverview(ctx)),
        }),
      ),
    {
      operator: "page",
      detail: {
        summary:
          "Readiness (HTML page): synthetic probes, 403 noise per window, jobs, backups and a ready/attention summary; without credentials a browser is sent to /admin/sign-in, a script gets 403",
        responses: {
          200: { description: "text/html", content: { "text/html": { schema: { type: "string" as const } } } },
          ...notSignedInDoc("/admin/ops/readiness"),
        },
      },
    },
  );
}
