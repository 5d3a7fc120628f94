import { Elysia, t } from "elysia";
import { recordAudit } from "../auth/audit";
import { backTo, consolePage, csrfField, formAction, formDoc, NO_NOTICE, type Notice, pageDoc, refusal, refusingPage, wantsHtml } from "../auth/console-kit";
import type { Guards } from "../auth/guards";
import type { OperatorRequest } from "../auth/session-plugin";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";
import { intQuery } from "../http/params";
import { anomalyLines, runLines } from "./audit-runs-page-parts/data";
import { auditRunsBody, PATH } from "./audit-runs-page-parts/view";
import { AUDIT_JOB } from "./jobs";
import { type RunRow, selectRun } from "./runs";
import { runOfJob } from "./store/runs";
import { setTriage, TRIAGE_STATUSES, type TriageStatus } from "./triage";
import { ignoredMetaQuery } from "../http/envelope";

// GET /admin/console/audit-runs: the transparency audit's runs, newest first (when, manual or scheduled, verdict,
// anomalies by severity), and one run's anomalies — the newest complete run, or ?run=<id|latest|previous|date> —
// each with what it is about, what was found and what the rules expected, its severity and triage, and a form
// that sets the triage through the verb and audit of PUT /admin/transparency/triage/{signature}. "Run audit now"
// runs the audit-anomalies job as POST /admin/jobs/{name}/run does (the form also writes an audit row). Every
// audit export is linked; the public ones need no credentials, the operators' declared movements take the session.
// What it reads and how it is drawn: audit-runs-page-parts/ (data.ts, view.ts; a sub-room: the folder holds 30 files).

const RUNS_PAGE = 20;
const ANOMALIES_PAGE = 50;

const PageQuery = t.Object({
  ...ignoredMetaQuery,
  run: t.Optional(t.String({ maxLength: 40, description: "the run whose anomalies are shown: an id, latest, previous or a UTC date (default: latest)" })),
  runs_offset: intQuery({ minimum: 0, maximum: 1_000_000, defaultValue: 0, description: "runs to skip (the runs' Older/Newer links)" }),
  offset: intQuery({ minimum: 0, maximum: 1_000_000, defaultValue: 0, description: "anomalies of the run to skip" }),
  done: t.Optional(t.String({ maxLength: 40, description: "set by a form's redirect: triaged or ran-<run id>" })),
  sig: t.Optional(t.String({ maxLength: 128, description: "set by the triage form's redirect: the signature" })),
});
const Back = {
  run: t.Optional(t.String({ maxLength: 40, description: "the run shown, kept on the way back" })),
  runs_offset: t.Optional(t.String({ maxLength: 8 })),
  offset: t.Optional(t.String({ maxLength: 8 })),
};
const TriageForm = t.Object(
  {
    ...csrfField,
    status: t.String({ maxLength: 20, description: TRIAGE_STATUSES.join(", ") }),
    owner: t.String({ maxLength: 100, description: "who answers for it (required)" }),
    eta_utc: t.Optional(t.String({ maxLength: 30, description: "when it should be settled: a UTC date or date-time ending in Z (optional)" })),
    note: t.Optional(t.String({ maxLength: 2000 })),
    ...Back,
  },
  { additionalProperties: false },
);
const RunForm = t.Object({ ...csrfField }, { additionalProperties: false });
const SIGNATURE = /^[A-Za-z0-9:-]{1,128}$/;

interface View {
  run?: string;
  runsOffset: number;
  offset: number;
}

const intOr0 = (v: string | undefined) => (v && /^\d{1,7}$/.test(v) ? Number(v) : 0);
const viewOf = (b: { run?: string; runs_offset?: string; offset?: string }): View => ({
  run: b.run?.trim() || undefined,
  runsOffset: intOr0(b.runs_offset),
  offset: intOr0(b.offset),
});

function doneSentence(done: string | undefined, sig: string | undefined): string | null {
  if (done === "triaged" && sig && SIGNATURE.test(sig)) return `Triage of ${sig} saved; triage.json publishes it.`;
  const ran = done ? /^ran-(\d{1,15})$/.exec(done) : null;
  return ran ? `Audit run #${ran[1]} finished; its anomalies are below.` : null;
}

async function render(ctx: AppContext, operator: OperatorRequest, view: View, n: Notice, status = 200): Promise<Response> {
  let selected: RunRow | null;
  let note = n;
  let code = status;
  let runParam = view.run ?? null;
  try {
    selected = (await selectRun(ctx, view.run, "run")).run;
  } catch (err) {
    // A run the URL names that does not exist: the page with the newest complete run and the reason (404/400).
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    selected = (await selectRun(ctx, undefined, "run")).run;
    note = { done: null, error: `${err.message}; showing the latest complete run.` };
    code = err.status;
    runParam = null;
  }
  const runs = await runLines(ctx, view.runsOffset, RUNS_PAGE);
  const anomalies = selected ? await anomalyLines(ctx, selected, view.offset, ANOMALIES_PAGE) : { lines: [], hasMore: false, total: 0 };
  const verdict = selected ? (runs.lines.find((r) => r.id === selected.id)?.verdict ?? (selected.error ? "failed" : (selected.overall ?? "incomplete"))) : "";
  const body = auditRunsBody({
    now: ctx.clock.now().toISOString(),
    canRun: ctx.chain.configured,
    runs: runs.lines,
    runsTotal: runs.total,
    runsOffset: view.runsOffset,
    runsPage: RUNS_PAGE,
    runsHasMore: runs.hasMore,
    selected: selected ? { id: selected.id, label: selected.label, verdict, complete: selected.is_complete === 1, error: selected.error } : null,
    runParam,
    anomalies: anomalies.lines,
    anomaliesTotal: anomalies.total,
    offset: view.offset,
    anomaliesPage: ANOMALIES_PAGE,
    anomaliesHasMore: anomalies.hasMore,
    csrf: operator.csrfToken,
    notice: note,
  });
  return consolePage(operator, "Audit runs", PATH, body, code);
}

/** The page's redirect after a form: the same view, with the result. */
function backWith(view: View, result: Record<string, string>): Response {
  const params: Record<string, string> = {};
  if (view.run) params.run = view.run;
  if (view.runsOffset) params.runs_offset = String(view.runsOffset);
  if (view.offset) params.offset = String(view.offset);
  return backTo(PATH, { ...params, ...result });
}

export function auditRunsPageRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:console-audit-runs" })
    .use(guards.operator.plugin)
    .get(
      PATH,
      async ({ operator, query, request }) => {
        const run = query.run?.trim() || undefined;
        // A script (no text/html in Accept) asking for a run that does not exist gets the JSON envelope; a
        // browser gets the page with the newest complete run and the reason.
        if (run !== undefined && !wantsHtml(request)) await selectRun(ctx, run, "query.run");
        return render(
          ctx,
          operator,
          { run, runsOffset: query.runs_offset ?? 0, offset: query.offset ?? 0 },
          { ...NO_NOTICE, done: doneSentence(query.done, query.sig) },
        );
      },
      {
        // An offset past its bound: for a browser, the newest runs and complete run, with the message.
        operator: refusingPage((operator) => (status, error) => render(ctx, operator, { runsOffset: 0, offset: 0 }, { done: null, error }, status)),
        query: PageQuery,
        detail: pageDoc(
          "Audit runs (HTML page): the transparency audit's runs (trigger, verdict, anomalies by severity) and one run's anomalies with a triage form each",
          PATH,
          ["admin"],
        ),
      },
    )
    .post(
      `${PATH}/triage/:signature`,
      ({ operator, params, body, request }) => {
        const view = viewOf(body);
        return formAction(
          request,
          async () => {
            if (!(TRIAGE_STATUSES as readonly string[]).includes(body.status))
              throw refusal(400, `Nothing was changed: status must be one of ${TRIAGE_STATUSES.join(", ")}.`);
            const owner = body.owner.trim();
            if (owner === "") throw refusal(400, "Nothing was changed: say who owns it (owner).");
            const blank = (v: string | undefined) => (v === undefined || v.trim() === "" ? null : v.trim());
            await setTriage(ctx, operator, params.signature, {
              status: body.status as TriageStatus,
              owner,
              eta_utc: blank(body.eta_utc),
              note: blank(body.note),
            });
            return backWith(view, { done: "triaged", sig: params.signature });
          },
          (status, error) => render(ctx, operator, view, { done: null, error }, status),
        );
      },
      {
        operator: "form",
        params: t.Object({
          signature: t.String({
            minLength: 1,
            maxLength: 128,
            pattern: "^[A-Za-z0-9:-]+$",
            description: "the anomalous signature, or token-snapshot:12 and the like",
          }),
        }),
        body: TriageForm,
        detail: formDoc(
          "Set the triage of an anomalous signature from the audit-runs page (audited, as PUT /admin/transparency/triage/{signature})",
          "csrf_token, status, owner, eta_utc, note; run, runs_offset, offset (the view to come back to)",
          { 400: "a status, owner or ETA refused", 404: "no complete run flagged this signature" },
          ["admin"],
        ),
      },
    )
    .post(
      `${PATH}/run`,
      ({ operator, request }) =>
        formAction(
          request,
          async () => {
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
            return backTo(PATH, { run: String(run.id), done: `ran-${run.id}` });
          },
          (status, error) => render(ctx, operator, { runsOffset: 0, offset: 0 }, { done: null, error }, status),
        ),
      {
        operator: "form",
        body: RunForm,
        detail: formDoc(
          "Run the transparency audit now from the audit-runs page (the audit-anomalies job, as POST /admin/jobs/audit-anomalies/run; audited)",
          "csrf_token",
          { 409: "TOKEN_MINT not set, another run in progress, or the run failed (no token snapshot yet)" },
          ["admin"],
        ),
      },
    );
}
