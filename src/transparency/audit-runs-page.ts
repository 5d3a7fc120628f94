import { Elysia, t } from "elysia";
import { backTo, consolePage, csrfField, formAction, formDoc, refusal, type Notice, NO_NOTICE, notice, pageDoc, when } from "../auth/console-kit";
import type { Guards } from "../auth/guards";
import type { OperatorRequest } from "../auth/session-plugin";
import type { AppContext } from "../context";
import { compileHtml } from "../http/html";
import { intQuery } from "../http/params";
import { summary } from "./reports";
import { listRunsPage, runView, selectRun } from "./runs";
import { setTriage, TRIAGE_STATUSES, type TriageStatus } from "./triage";

// GET /admin/console/audit-runs: the transparency audit's runs, newest first, and one run's anomalies (the
// newest complete run, or ?run=<id>) for triage: each anomalous signature with its severity, types and change,
// and a form that sets its triage (status, owner, ETA, note) through the same verb and audit as
// PUT /admin/transparency/triage/{signature}. What the public sees is /transparency/audit-anomalies/*.

const PATH = "/admin/console/audit-runs";
const PUBLIC = "/transparency/audit-anomalies";
const RUNS = 30;
const ANOMALIES = 100;

const PageQuery = t.Object({
  run: intQuery({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "the run whose anomalies are shown (default: the newest complete run)" }),
  done: t.Optional(t.String({ maxLength: 100, description: "set by the triage form's redirect: the signature" })),
});
const TriageForm = t.Object(
  {
    ...csrfField,
    status: t.String({ maxLength: 20, description: TRIAGE_STATUSES.join(", ") }),
    owner: t.String({ maxLength: 120 }),
    eta_utc: t.Optional(t.String({ maxLength: 40, description: "ISO 8601 time, optional" })),
    note: t.Optional(t.String({ maxLength: 500 })),
    run: t.Optional(t.String({ maxLength: 16, description: "the run shown, kept on the way back" })),
  },
  { additionalProperties: false },
);

interface PageData {
  generatedAt: string;
  runs: Array<{
    id: number;
    label: string;
    selected: boolean;
    state: string;
    badge: string;
    rows: number;
    anomalous: number;
    severities: string;
    finished: string;
  }>;
  selected: { id: number; label: string } | null;
  anomalies: Array<{ signature: string; severity: string; badge: string; kind: string; types: string; delta: string; triage: string }>;
  statuses: readonly string[];
  csrf: string | null;
  exports: Array<readonly [string, string]>;
  notice: ReturnType<typeof notice>;
}

const body = compileHtml<PageData>(
  "console-audit-runs",
  `<style>details.act form p { margin:4px 0; }</style>
<h1>Audit runs</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. Each run checks the token's published data against the chain; an anomalous signature is triaged here (what the public sees is under ${PUBLIC}).</p>
<%= it.notice %>
<section id="runs"><h2>Runs</h2>
<% if (it.runs.length === 0) { %><p class="muted" id="runs-none">No audit run yet (the audit runs after the first chain snapshot; TOKEN_MINT must be set).</p><% } else { %><table class="data" id="run-rows"><thead><tr><th>Run</th><th>Verdict</th><th>Rows</th><th>Anomalous</th><th>Severities</th><th>Finished</th></tr></thead><tbody>
<% for (const r of it.runs) { %><tr id="run-<%= r.id %>"><td data-label="Run"><a href="${PATH}?run=<%= r.id %>#anomalies"<% if (r.selected) { %> aria-current="true"<% } %>>#<%= r.id %> <%= r.label %></a></td><td data-label="Verdict"><span class="badge <%= r.badge %>"><%= r.state %></span></td><td data-label="Rows"><%= r.rows %></td><td data-label="Anomalous"><%= r.anomalous %></td><td data-label="Severities"><%= r.severities %></td><td data-label="Finished"><%= r.finished %></td></tr>
<% } %></tbody></table><% } %></section>
<section id="anomalies"><h2>Anomalies<% if (it.selected) { %> of run #<%= it.selected.id %> (<%= it.selected.label %>)<% } %></h2>
<% if (it.anomalies.length === 0) { %><p class="muted" id="anomalies-none">None to triage.</p><% } else { %><table class="data" id="anomaly-rows"><thead><tr><th>Signature</th><th>Severity</th><th>Types</th><th>Change</th><th>Triage</th></tr></thead><tbody>
<% for (const a of it.anomalies) { %><tr id="sig-<%= a.signature %>"><td data-label="Signature"><code><%= a.signature %></code> <span class="muted"><%= a.kind %></span></td><td data-label="Severity"><span class="badge <%= a.badge %>"><%= a.severity %></span></td><td data-label="Types"><%= a.types %></td><td data-label="Change"><%= a.delta %></td>
<td data-label="Triage"><details class="act"><summary><%= a.triage %></summary><form method="post" action="${PATH}/triage/<%= a.signature %>"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><% if (it.selected) { %><input type="hidden" name="run" value="<%= it.selected.id %>"><% } %>
<p><label>Status <select name="status"><% for (const s of it.statuses) { %><option<%= s === a.triage ? " selected" : "" %>><%= s %></option><% } %></select></label></p><p><label>Owner <input name="owner" maxlength="120" required></label></p><p><label>ETA <input name="eta_utc" maxlength="40" placeholder="2026-05-01T00:00:00Z"></label></p><p><label>Note <input name="note" maxlength="500"></label></p><p><button type="submit">Save triage</button></p></form></details></td></tr>
<% } %></tbody></table><% } %></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

const SEVERITY_BADGE: Record<string, string> = { low: "", medium: "warn", high: "bad", critical: "bad" };
const OVERALL_BADGE: Record<string, string> = { ok: "ok", warn: "warn", bad: "bad" };

function render(ctx: AppContext, operator: OperatorRequest, runId: number | undefined, n: Notice, status = 200): Response {
  const sel = selectRun(ctx, runId === undefined ? undefined : String(runId), "query.run");
  const s = summary(ctx, sel, true, ANOMALIES);
  const runs = listRunsPage(ctx, RUNS, 0, null).map((r) => runView(r, sel.run?.id ?? null));
  const q = sel.run ? `?run=${sel.run.id}` : "";
  return consolePage(
    operator,
    "Audit runs",
    PATH,
    body({
      generatedAt: when(ctx.clock.now().toISOString())!,
      runs: runs.map((r) => ({
        id: r.run,
        label: r.label,
        selected: r.is_selected,
        state: r.is_complete ? (r.overall ?? "ok") : r.error ? "failed" : "incomplete",
        badge: r.is_complete ? (OVERALL_BADGE[r.overall ?? "ok"] ?? "") : "bad",
        rows: r.rows_total,
        anomalous: r.signatures_with_anomalies,
        severities: Object.entries(r.severity_counts)
          .filter(([, n]) => n > 0)
          .map(([k, n]) => `${k} ${n}`)
          .join(", "),
        finished: when(r.finished_at) ?? "–",
      })),
      selected: sel.run ? { id: sel.run.id, label: sel.run.label } : null,
      anomalies: s.top_anomalies.map((a) => ({
        signature: a.signature,
        severity: a.severity,
        badge: SEVERITY_BADGE[a.severity] ?? "warn",
        kind: a.kind,
        types: a.anomaly_types.join(", "),
        delta: a.delta,
        triage: a.triage_status ?? "untriaged",
      })),
      statuses: TRIAGE_STATUSES,
      csrf: operator.csrfToken,
      exports: [
        ["Summary of this run (JSON)", `${PUBLIC}/summary.json${q}`],
        ["Runs (JSON)", `${PUBLIC}/runs.json`],
        ["This run's rows (JSON)", `${PUBLIC}/export.json${q}`],
        ["This run's rows (CSV)", `${PUBLIC}/export${q}`],
        ["Triage (JSON)", `${PUBLIC}/triage.json`],
        ["Alerts (JSON)", `${PUBLIC}/alerts.json`],
        ["Threshold history (JSON)", `${PUBLIC}/threshold-history.json`],
        ["Glossary and rules (JSON)", `${PUBLIC}/glossary.json`],
      ],
      notice: notice(n),
    }),
    status,
  );
}

export function auditRunsPageRoutes(ctx: AppContext, guards: Guards) {
  const refuseWith = (operator: OperatorRequest, run?: number) => (status: number, error: string) => render(ctx, operator, run, { done: null, error }, status);
  return new Elysia({ name: "herald:console-audit-runs" })
    .use(guards.operator.plugin)
    .get(
      PATH,
      ({ operator, query }) =>
        render(ctx, operator, query.run, {
          ...NO_NOTICE,
          done: query.done && /^[1-9A-HJ-NP-Za-km-z]{32,100}$/.test(query.done) ? `Triage of ${query.done} saved.` : null,
        }),
      {
        operator: "page",
        query: PageQuery,
        detail: pageDoc("Audit runs (HTML page): the transparency audit's runs and one run's anomalies with a triage form each", PATH),
      },
    )
    .post(
      `${PATH}/triage/:signature`,
      ({ operator, params, body, request }) => {
        const run = body.run && /^\d{1,15}$/.test(body.run) ? Number(body.run) : undefined;
        return formAction(
          request,
          () => {
            if (!(TRIAGE_STATUSES as readonly string[]).includes(body.status))
              throw refusal(400, `Nothing was changed: status must be one of ${TRIAGE_STATUSES.join(", ")}.`);
            const blank = (v: string | undefined) => (v === undefined || v.trim() === "" ? null : v.trim());
            setTriage(ctx, operator, params.signature, {
              status: body.status as TriageStatus,
              owner: body.owner.trim(),
              eta_utc: blank(body.eta_utc),
              note: blank(body.note),
            });
            return backTo(PATH, run === undefined ? { done: params.signature } : { run: String(run), done: params.signature });
          },
          refuseWith(operator, run),
        );
      },
      {
        operator: "form",
        params: t.Object({ signature: t.String({ minLength: 1, maxLength: 100 }) }),
        body: TriageForm,
        detail: formDoc(
          "Set the triage of an anomalous signature from the audit runs page (audited, as PUT /admin/transparency/triage/{signature})",
          "csrf_token, status, owner, eta_utc, note, run",
          {
            400: "a status, owner or ETA refused",
            404: "no complete run flagged this signature",
          },
        ),
      },
    );
}
