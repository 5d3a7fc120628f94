import { t } from "elysia";
import { recordAudit } from "../../auth/audit";
import { consoleRoute, form, refusal } from "../../console/kit";
import type { Guards } from "../../auth/guards";
import { badge, cells, code, dataTable, hrefWith, link, muted, setParts, when } from "../../console/frame";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { compileHtml, type SafeHtml } from "../../http/formats/html";
import { intQuery } from "../../http/params";
import { type AnomalyLine, anomalyLines, type RunLine, runLines } from "./audit-lines";
import { AUDIT_JOB } from "../jobs";
import { type RunRow, selectRun } from "../reports/runs";
import { runOfJob } from "../store/runs";
import { setTriage, TRIAGE_STATUSES, type TriageStatus } from "../operator-inputs/triage";

// GET /admin/console/audit-runs: the transparency audit's runs, newest first (when, manual or scheduled, verdict,
// anomalies by severity), and one run's anomalies — the newest complete run, or ?run=<id|latest|previous|date> —
// each with what it is about, what was found and what the rules expected (audit-lines.ts), its severity and triage,
// and a form that sets the triage through the verb and audit of PUT /admin/transparency/triage/{signature}. "Run
// audit now" runs the audit-anomalies job as POST /admin/jobs/{name}/run does (the form also writes an audit row).
// Every audit export is linked; the public ones need no credentials, the operators' declared movements take the session.

const PATH = "/admin/console/audit-runs";
const PUBLIC = "/transparency/audit-anomalies";
const RUNS_PAGE = 20;
const ANOMALIES_PAGE = 50;
const VERDICT_BADGE: Record<string, string> = { ok: "ok", warn: "warn", bad: "bad", failed: "bad", running: "", incomplete: "warn" };
const SEVERITY_BADGE: Record<string, string> = { low: "", medium: "warn", high: "bad", critical: "bad" };

interface View {
  run?: string;
  runs_offset?: number;
  offset?: number;
}

const severities = (r: RunLine) =>
  r.anomalous === 0
    ? "none"
    : cells(
        `${r.anomalous}:`,
        ...(["critical", "high", "medium", "low"] as const).filter((s) => r.severities[s] > 0).map((s) => badge(SEVERITY_BADGE[s]!, `${s} ${r.severities[s]}`)),
      );
const triageText = (a: AnomalyLine) =>
  a.triage
    ? `${a.triage.status}, owner ${a.triage.owner}${a.triage.eta ? `, ETA ${when(a.triage.eta)}` : ""}${a.triage.note ? ` — ${a.triage.note}` : ""} (by ${a.triage.by}, ${when(a.triage.at)})`
    : "untriaged";

const triageCell = compileHtml<{
  a: AnomalyLine;
  text: string;
  eta: string;
  statuses: readonly string[];
  csrf: SafeHtml;
  back: { run: string; runs_offset: number; offset: number };
}>(
  "console-audit-triage",
  `<span class="triage"><%= it.text %></span><details class="act"><summary>Triage…</summary><form method="post" action="${PATH}/triage/<%= encodeURIComponent(it.a.signature) %>"><%= it.csrf %><input type="hidden" name="run" value="<%= it.back.run %>"><input type="hidden" name="runs_offset" value="<%= it.back.runs_offset %>"><input type="hidden" name="offset" value="<%= it.back.offset %>">
<p><label>Status <select name="status"><% for (const s of it.statuses) { %><option<%= s === (it.a.triage ? it.a.triage.status : "investigating") ? " selected" : "" %>><%= s %></option><% } %></select></label></p><p><label>Owner <input name="owner" maxlength="100" required value="<%= it.a.triage ? it.a.triage.owner : "" %>"></label></p><p><label>ETA (UTC) <input name="eta_utc" maxlength="30" placeholder="2026-05-01 or 2026-05-01T12:00:00Z" value="<%= it.eta %>"></label></p><p><label>Note <textarea name="note" maxlength="2000" rows="2"><%= it.a.triage && it.a.triage.note ? it.a.triage.note : "" %></textarea></label></p><p><button type="submit" id="triage-<%= it.a.signature %>">Save triage</button></p></form></details>`,
);

const body = compileHtml<{
  canRun: boolean;
  csrf: SafeHtml;
  runsTotal: number;
  runs: SafeHtml;
  selected: { id: number; label: string; verdict: string; complete: boolean; error: string | null } | null;
  anomaliesTotal: number;
  anomaliesRange: string;
  anomalies: SafeHtml;
}>(
  "console-audit-runs",
  `<style>#run-rows td[data-label=Trigger], #run-rows td[data-label=Run] { white-space:nowrap; } #anomaly-rows td[data-label=Anomaly] { min-width:11em; } #anomaly-rows td[data-label=Triage] { min-width:12em; }</style>
<section id="run-now"><% if (it.canRun) { %><form method="post" action="${PATH}/run" class="inline"><%= it.csrf %><button type="submit" class="primary" id="run-audit">Run audit now</button></form> <span class="muted">The audit-anomalies job, as <code>POST /admin/jobs/audit-anomalies/run</code>; it also runs every 15 minutes.</span><% } else { %><p class="muted" id="run-disabled">TOKEN_MINT is not set: there is nothing to audit, so no run can be started.</p><% } %></section>
<section id="runs"><h2>Runs</h2>
<% if (it.runsTotal) { %><p class="muted" id="runs-count"><%= it.runsTotal %> <%= it.runsTotal === 1 ? "run" : "runs" %>, newest first; pick one to see its anomalies.</p><% } %>
<%= it.runs %></section>
<section id="anomalies"><h2>Anomalies<% if (it.selected) { %> of run #<%= it.selected.id %> (<%= it.selected.label %>)<% } %></h2>
<% if (it.selected && !it.selected.complete) { %><p class="muted" id="run-incomplete">This run is <%= it.selected.verdict %><%= it.selected.error ? ": " + it.selected.error : "" %>. Its rows are not published as a verdict; the next complete run examines everything again.</p><% } %>
<% if (it.anomaliesTotal) { %><p class="muted" id="anomalies-count"><%= it.anomaliesTotal %> anomalous <%= it.anomaliesTotal === 1 ? "row" : "rows" %>, most severe first<%= it.anomaliesRange %>.</p><% } %>
<%= it.anomalies %></section>`,
);

export function auditRunsPageRoutes(ctx: AppContext, guards: Guards) {
  const intOr0 = (v: string | undefined) => (v && /^\d{1,7}$/.test(v) ? Number(v) : 0);
  const backOf = (b: { run?: string; runs_offset?: string; offset?: string }) => ({
    run: b.run?.trim() || undefined,
    runs_offset: intOr0(b.runs_offset),
    offset: intOr0(b.offset),
  });
  return consoleRoute(ctx, guards, {
    path: PATH,
    title: "Audit runs",
    lead: `Each run checks the token's synced transactions and chain snapshots against the published rules (glossary.json); an anomaly is triaged here, and the public sees its triage under ${PUBLIC}.`,
    summary: "Audit runs (HTML page): the transparency audit's runs (trigger, verdict, anomalies by severity) and one run's anomalies with a triage form each",
    query: {
      run: t.Optional(t.String({ maxLength: 40, description: "the run whose anomalies are shown: an id, latest, previous or a UTC date (default: latest)" })),
      runs_offset: intQuery({ minimum: 0, maximum: 1_000_000, defaultValue: 0, description: "runs to skip (the runs' Older/Newer links)" }),
      offset: intQuery({ minimum: 0, maximum: 1_000_000, defaultValue: 0, description: "anomalies of the run to skip" }),
    },
    done: {
      field: "ref",
      pattern: /^[A-Za-z0-9:-]{1,128}$/,
      says: {
        triaged: (sig) => `Triage of ${sig} saved; triage.json publishes it.`,
        ran: (id) => (/^\d{1,15}$/.test(id) ? `Audit run #${id} finished; its anomalies are below.` : null),
      },
    },
    async load(v: View, call) {
      let runParam = v.run?.trim() || null;
      let selected: RunRow | null;
      try {
        selected = (await selectRun(ctx, runParam ?? undefined, "query.run")).run;
      } catch (err) {
        // A run the URL names that does not exist: the page with the newest complete run and the reason (404/400).
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        call.refuse(new AppError(err.code, `${err.message}; showing the latest complete run.`, { details: err.details }));
        selected = (await selectRun(ctx, undefined, "run")).run;
        runParam = null;
      }
      const runsOffset = v.runs_offset ?? 0;
      const offset = v.offset ?? 0;
      const runs = await runLines(ctx, runsOffset, RUNS_PAGE);
      const anomalies = selected ? await anomalyLines(ctx, selected, offset, ANOMALIES_PAGE) : { lines: [], hasMore: false, total: 0 };
      const verdict = selected
        ? (runs.lines.find((r) => r.id === selected.id)?.verdict ?? (selected.error ? "failed" : (selected.overall ?? "incomplete")))
        : "";
      return { runParam, selected, verdict, runs, runsOffset, anomalies, offset, q: selected ? `?run=${selected.id}` : "" };
    },
    view: ({ runParam, selected: sel, verdict, runs, runsOffset, anomalies, offset }, { csrf }) => {
      const back = { run: runParam ?? "", runs_offset: runsOffset, offset };
      return body({
        canRun: ctx.chain.configured,
        csrf,
        runsTotal: runs.total,
        runs: dataTable({
          id: "run-rows",
          rows: runs.lines,
          empty: runs.total ? "None on this page." : "None. The audit runs after the first chain snapshot of TOKEN_MINT.",
          rowId: (r) => `run-${r.id}`,
          columns: {
            Run: (r) =>
              sel?.id === r.id
                ? cells(link(hrefWith(PATH, { run: String(r.id), runs_offset: runsOffset }, "#anomalies"), `#${r.id}`), muted("(shown)"))
                : link(hrefWith(PATH, { run: String(r.id), runs_offset: runsOffset }, "#anomalies"), `#${r.id}`),
            Started: (r) => when(r.started),
            Trigger: (r) => r.trigger,
            Verdict: (r) => cells(badge(VERDICT_BADGE[r.verdict] ?? "", r.verdict), r.error ? muted(r.error) : null),
            "Anomalies by severity": severities,
            "Rows examined": (r) => `${r.rows} (${r.transactions} transactions)`,
            Finished: (r) => when(r.finished) ?? "–",
          },
          pages: {
            id: "runs-pages",
            offset: runsOffset,
            pageSize: RUNS_PAGE,
            hasMore: runs.hasMore,
            href: (o) => hrefWith(PATH, { run: runParam, runs_offset: o }, "#runs"),
            labels: ["Newer runs", "Older runs"],
          },
        }),
        selected: sel ? { id: sel.id, label: sel.label, verdict, complete: sel.is_complete === 1, error: sel.error } : null,
        anomaliesTotal: anomalies.lines.length ? anomalies.total : 0,
        anomaliesRange: anomalies.total > anomalies.lines.length ? `; ${offset + 1}–${offset + anomalies.lines.length} shown` : "",
        anomalies: dataTable({
          id: "anomaly-rows",
          rows: anomalies.lines,
          empty: `None${sel ? (anomalies.total ? " on this page" : "") : ": no complete run yet"}.`,
          rowId: (a) => `sig-${a.signature}`,
          columns: {
            Anomaly: (a) => cells(...a.types.map(code)),
            Subject: (a) => a.subject,
            Found: (a) => a.found,
            Expected: (a) => a.expected,
            Severity: (a) => badge(SEVERITY_BADGE[a.severity] ?? "warn", a.severity),
            Triage: (a) =>
              triageCell({ a, text: triageText(a), eta: a.triage?.eta ? `${a.triage.eta.slice(0, 19)}Z` : "", statuses: TRIAGE_STATUSES, csrf, back }),
          },
          pages: {
            id: "anomaly-pages",
            offset,
            pageSize: ANOMALIES_PAGE,
            hasMore: anomalies.hasMore,
            href: (o) => hrefWith(PATH, { run: runParam, runs_offset: runsOffset, offset: o }, "#anomalies"),
            labels: ["More severe", "Less severe"],
          },
        }),
      });
    },
    exports: ({ q }) => ({
      links: [
        ["This run's summary and top anomalies (JSON)", `${PUBLIC}/summary.json${q}`],
        ["Runs with their aggregates (JSON)", `${PUBLIC}/runs.json${q}`],
        ["Trend up to this run (JSON)", `${PUBLIC}/trend.json${q}`],
        ["Whether this run alerts (JSON)", `${PUBLIC}/alerts.json${q}`],
        ["Whether this run alerts (CSV)", `${PUBLIC}/alerts.csv${q}`],
        ["This run against the complete run before it (JSON)", `${PUBLIC}/diff/export.json${q}`],
        ["This run against the complete run before it (CSV)", `${PUBLIC}/diff/export${q}`],
        ["The previous and latest complete runs side by side (JSON)", `${PUBLIC}/diff/compare.json`],
        ["The previous and latest complete runs side by side (CSV)", `${PUBLIC}/diff/compare.csv`],
        ["Every row of this run (JSON)", `${PUBLIC}/export.json${q}`],
        ["Every row of this run (CSV)", `${PUBLIC}/export${q}`],
        ["Triage of every anomaly (JSON)", `${PUBLIC}/triage.json`],
        ["Threshold history (JSON)", `${PUBLIC}/threshold-history.json`],
        ["Declared movements, public (JSON)", `${PUBLIC}/declared-movements.json`],
        ["Declared movements, operators' view (JSON)", "/admin/transparency/declared-movements"],
        ["Glossary: every anomaly type and its rule (JSON)", `${PUBLIC}/glossary.json`],
        ["Schema registry of these answers (JSON)", `${PUBLIC}/schema-registry.json`],
      ],
    }),
    forms: [
      form({
        path: "/triage/:signature",
        params: {
          signature: t.String({
            minLength: 1,
            maxLength: 128,
            pattern: "^[A-Za-z0-9:-]+$",
            description: "the anomalous signature, or token-snapshot:12 and the like",
          }),
        },
        body: {
          status: t.String({ maxLength: 20, description: TRIAGE_STATUSES.join(", ") }),
          owner: t.String({ maxLength: 100, description: "who answers for it (required)" }),
          eta_utc: t.Optional(t.String({ maxLength: 30, description: "when it should be settled: a UTC date or date-time ending in Z (optional)" })),
          note: t.Optional(t.String({ maxLength: 2000 })),
          run: t.Optional(t.String({ maxLength: 40, description: "the run shown, kept on the way back" })),
          runs_offset: t.Optional(t.String({ maxLength: 8 })),
          offset: t.Optional(t.String({ maxLength: 8 })),
        },
        summary: "Set the triage of an anomalous signature from the audit-runs page (audited, as PUT /admin/transparency/triage/{signature})",
        refusals: { 400: "a status, owner or ETA refused", 404: "no complete run flagged this signature" },
        keep: backOf,
        run: async ({ operator, params, body: b }) => {
          if (!(TRIAGE_STATUSES as readonly string[]).includes(b.status))
            throw refusal(400, `Nothing was changed: status must be one of ${TRIAGE_STATUSES.join(", ")}.`);
          const owner = b.owner.trim();
          if (owner === "") throw refusal(400, "Nothing was changed: say who owns it (owner).");
          const blank = (v: string | undefined) => (v === undefined || v.trim() === "" ? null : v.trim());
          await setTriage(ctx, operator, params.signature, { status: b.status as TriageStatus, owner, eta_utc: blank(b.eta_utc), note: blank(b.note) });
          return { ...setParts(backOf(b)), done: "triaged", ref: params.signature };
        },
      }),
      form({
        path: "/run",
        summary: "Run the transparency audit now from the audit-runs page (the audit-anomalies job, as POST /admin/jobs/audit-anomalies/run; audited)",
        refusals: { 409: "TOKEN_MINT not set, another run in progress, or the run failed (no token snapshot yet)" },
        run: async ({ operator }) => {
          if (!ctx.chain.configured) throw refusal(409, "Nothing was run: TOKEN_MINT is not set, so there is nothing to audit.");
          const job = await ctx.jobs.runNow(AUDIT_JOB);
          const run = await runOfJob(ctx.store, job.run_id);
          // POST /admin/jobs/{name}/run writes no audit row (job_runs records the run, not who asked); the form does.
          await recordAudit(ctx.store, {
            at: ctx.clock.now().toISOString(),
            actor: operator.actor,
            action: "transparency.audit.run_now",
            target: run ? String(run.id) : null,
            details: { job: AUDIT_JOB, job_run_id: job.run_id, ok: job.ok, error: job.error, audit_run_id: run?.id ?? null },
            requestId: operator.requestId,
          });
          if (!job.ok || !run) throw refusal(409, `Nothing was audited: the run failed — ${job.error ?? "it made no audit run"}.`);
          return { run: String(run.id), done: "ran", ref: String(run.id) };
        },
      }),
    ],
  });
}
