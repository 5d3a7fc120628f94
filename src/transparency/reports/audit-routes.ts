import { type AnyElysia, Elysia, type Static, type TSchema } from "elysia";
import { conditionalGet } from "../../http/openapi/contract";
import type { AppContext } from "../../context";
import { CSV_CONTENT_TYPE, csvDoc } from "../../http/formats/csv";
import { metaRequested, requestedMeta } from "../../http/envelope";
import { refuses } from "../../http/routes/declare";
import { AppError } from "../../http/errors/errors";
import { DEFAULT_LIMIT, parsePage } from "../../http/pagination";
import { alerts } from "./alerts";
import { AuditResponses as R } from "./audit-model";
import { AuditQuery as Q } from "./audit-query-model";
import { alertsCsv, compareCsv, diffCsv } from "./csv";
import { listDeclarations } from "../operator-inputs/declarations";
import { compare, diffExport } from "./diffs";
import { exportCsvStream, exportJsonStream } from "./exports";
import { filtersEcho, parseRange, parseRowFilters, type RowFilterQuery } from "./filters";
import { GLOSSARY, OVERALL_RULE, SEVERITIES, SEVERITY_RULE, TRANSACTION_DELTA_RULE } from "../audit/glossary";
import { AnswerCache, answerJson, answerStream, type AnswerContext } from "../http-cache";
import { runsList, summary, trend } from "./reports";
import { selectRun, type RunRow } from "./runs";
import { schemaRegistry } from "./schema-registry";
import { auditState, dataTime } from "../state";
import { completeRunsBetween } from "../store/runs";
import { pctQuery, thresholdHistory } from "../operator-inputs/thresholds";
import { listTriage } from "../operator-inputs/triage";

// The public audit-anomaly routes (docs/transparency.md). Handlers are thin: select the run(s), call a report
// verb, answer with validators (src/transparency/http-cache.ts). No SQL here.

const P = "/transparency/audit-anomalies";
const errs = refuses(404);
const doc = (summary: string) => ({ tags: ["transparency"], summary, ...conditionalGet("etag", "last-modified") });
const csvDetail = (summary: string) => ({ ...doc(summary), ...csvDoc(`${summary} (CSV, RFC 4180)`) });
const flag = (v: string | undefined, fallback: boolean) => (v === undefined ? fallback : v === "1" || v === "true");
const overridesOf = (q: { sigs_increase_threshold_pct?: number; rows_increase_threshold_pct?: number }) => ({
  sigs: pctQuery(q.sigs_increase_threshold_pct, "query.sigs_increase_threshold_pct"),
  rows: pctQuery(q.rows_increase_threshold_pct, "query.rows_increase_threshold_pct"),
});

// Elysia's route types cannot follow a schema known here only as a type parameter: the handlers are typed by Q.
interface Routes<Q extends TSchema> {
  get(
    path: string,
    handler: (c: { query: Static<Q>; request: Request; set: { headers: Record<string, unknown> } }) => Promise<Response>,
    hook: object,
  ): unknown;
}
type Answer<Q extends TSchema> = (query: Static<Q>, request: Request, headers: Record<string, unknown>) => Promise<Response>;
/** One GET of this file, for `.use(...)`: every route here answers from the query, the request and its headers. */
const route =
  <Q extends TSchema>(path: string, query: Q, answer: Answer<Q>, hook: object) =>
  <A extends AnyElysia>(app: A): A => {
    (app as unknown as Routes<Q>).get(`${P}/${path}`, ({ query, request, set }) => answer(query, request, set.headers), { query, ...hook });
    return app;
  };

export function auditRoutes(ctx: AppContext) {
  const now = () => ctx.clock.now();
  // One answer per audit data version and request target (http-cache.ts AnswerCache); include_meta ones are never cached.
  const cache = new AnswerCache();
  const json = async (request: Request, headers: Record<string, unknown>, build: () => Promise<Record<string, unknown>>): Promise<Response> => {
    const state = await auditState(ctx);
    const a: AnswerContext = { request, lastModified: state.changedAt, headers };
    if (metaRequested(request.url)) return answerJson(a, await build(), now);
    return cache.answer(a, state.version, "application/json;charset=utf-8", async () => JSON.stringify({ success: true, ...(await build()) }));
  };
  const csv = async (request: Request, headers: Record<string, unknown>, name: string, build: () => Promise<string>): Promise<Response> => {
    const state = await auditState(ctx);
    const a: AnswerContext = { request, lastModified: state.changedAt, headers };
    return cache.answer(a, state.version, CSV_CONTENT_TYPE, build, { "content-disposition": `inline; filename="${name}"` });
  };
  /** A JSON read at `${P}/<name>`, its answer schema the AuditResponses entry of the same name. */
  const read = <Q extends TSchema>(name: keyof typeof R, query: Q, summary: string, build: (q: Static<Q>) => Promise<Record<string, unknown>>) =>
    route(name, query, (q, request, headers) => json(request, headers, () => build(q)), { response: { 200: R[name], ...errs }, detail: doc(summary) });
  /** A CSV twin: written from its JSON answer's builder, so the two cannot disagree. */
  const sheet = <Q extends TSchema>(path: string, query: Q, summary: string, file: string, build: (q: Static<Q>) => Promise<string>) =>
    route(path, query, (q, request, headers) => csv(request, headers, file, () => build(q)), { detail: csvDetail(summary) });

  const run = (q: { run?: string }) => selectRun(ctx, q.run, "query.run");
  const alertsOf = async (q: Static<typeof Q.alertsCsv>, recommendations: boolean) => alerts(ctx, await run(q), overridesOf(q), recommendations);
  const compareOf = async (q: Static<typeof Q.compare>) => {
    const a = await selectRun(ctx, q.run_a, "query.run_a", "previous");
    const b = await selectRun(ctx, q.run_b, "query.run_b", "latest");
    return compare(ctx, a, b, flag(q.include_rows, true), q.row_limit ?? 50);
  };
  const diffOf = async (q: Static<typeof Q.diffExport>) => diffExport(ctx, await run(q), flag(q.include_rows, true), q.row_limit ?? 50);
  const exported =
    (format: "json" | "csv"): Answer<typeof Q.export> =>
    (q, request, headers) =>
      exportAnswer(ctx, request, headers, q, format);

  return new Elysia({ name: "herald:transparency-audit" })
    .use(
      read("summary.json", Q.summary, "The selected run's totals and its most severe anomalies (default: the latest complete run)", async (q) =>
        summary(ctx, await run(q), flag(q.include_top_anomalies, true), q.top_limit ?? 10),
      ),
    )
    .use(
      read("runs.json", Q.runs, "Audit runs, newest first, with their aggregates; poll every 5–15 minutes", async (q) =>
        runsList(ctx, await run(q), parsePage(q)),
      ),
    )
    .use(
      read("trend.json", Q.trend, "One point per complete run up to the selected one: rows or signatures with anomalies, optionally filtered", async (q) => {
        const sel = await run(q);
        // No run selected (none complete yet): min_abs_delta is checked at 18 decimals, more than a mint can have.
        const filters = parseRowFilters(q, sel.run?.decimals ?? 18);
        const metric = q.metric === "rows" ? ("rows" as const) : ("sigs" as const);
        return trend(ctx, sel, { metric, limit: q.limit ?? 30, includeStatusCounts: flag(q.include_status_counts, true), filters });
      }),
    )
    .use(
      read("alerts.json", Q.alerts, "Whether the selected run should alert: its rise over the previous complete run against the thresholds", (q) =>
        alertsOf(q, flag(q.include_recommendations, false)),
      ),
    )
    .use(sheet("alerts.csv", Q.alertsCsv, "alerts.json as one CSV record", "audit-anomalies-alerts.csv", async (q) => alertsCsv(await alertsOf(q, false))))
    .use(read("diff/compare.json", Q.compare, "Two runs side by side: counts per anomaly type and severity, and their deltas", compareOf))
    .use(sheet("diff/compare.csv", Q.compare, "diff/compare.json's rows", "audit-anomalies-compare.csv", async (q) => compareCsv(await compareOf(q))))
    .use(read("diff/export.json", Q.diffExport, "The selected run against the complete run before it, with pct_delta", diffOf))
    .use(sheet("diff/export", Q.diffExport, "diff/export.json's rows with pct_delta", "audit-anomalies-diff.csv", async (q) => diffCsv(await diffOf(q))))
    .use(
      route("export.json", Q.export, exported("json"), {
        response: { 200: R["export.json"], ...errs },
        detail: doc("Every row of the selected run(s), streamed: filter by severity, types, signature, min_abs_delta; from/to select runs by label"),
      }),
    )
    .use(route("export", Q.export, exported("csv"), { detail: csvDetail("export.json's rows, streamed") }))
    .use(
      read("glossary.json", Q.plain, "Every anomaly type with its description and the rule that decides it", async () => {
        const c = ctx.config.chain;
        return {
          generated_at_utc: await dataTime(ctx),
          count: GLOSSARY.length,
          glossary: GLOSSARY,
          severities: SEVERITIES,
          severity_rule: SEVERITY_RULE,
          overall_rule: OVERALL_RULE,
          transaction_delta_rule: TRANSACTION_DELTA_RULE,
          tracked_wallets: { treasury: [...c.treasuryWallets], reserve: [...c.reserveWallets], lp: [...c.lpWallets], mint: c.tokenMint ?? null },
        };
      }),
    )
    .use(
      read("threshold-history.json", Q.thresholdHistory, "Every threshold change (who, when, why), newest first, and the thresholds in force", async (q) => ({
        generated_at_utc: await dataTime(ctx),
        ...(await thresholdHistory(ctx, q.limit ?? 100)),
      })),
    )
    .use(
      read("triage.json", Q.triage, "Operators' triage of anomalous signatures (status, owner, eta_utc); filter by status", async (q) => {
        // Paged by offset only (a text key, no cursor issued), so parsePage's bound on deep offsets does not apply:
        // the offset is the only way to the later rows.
        const page = { limit: q.limit ?? DEFAULT_LIMIT, offset: q.offset ?? 0, after: null, cursor: null };
        return { generated_at_utc: await dataTime(ctx), ...(await listTriage(ctx, q.status, page)) };
      }),
    )
    .use(
      read("declared-movements.json", Q.plain, "Declared treasury movements (active and retracted) and how many transactions each covered", async () => {
        const movements = await listDeclarations(ctx);
        return { generated_at_utc: await dataTime(ctx), count: movements.length, movements };
      }),
    )
    .use(
      read("schema-registry.json", Q.plain, "A versioned JSON Schema (draft 2020-12) for every transparency answer", async () =>
        schemaRegistry(ctx.config.publicBaseUrl, await dataTime(ctx)),
      ),
    );
}

async function exportAnswer(
  ctx: AppContext,
  request: Request,
  headers: Record<string, unknown>,
  query: RowFilterQuery & { run?: string; from?: string; to?: string },
  format: "json" | "csv",
): Promise<Response> {
  const range = parseRange(query.from, query.to);
  if (range && query.run) {
    throw new AppError("invalid_query", "query.run cannot be combined with query.from/query.to: choose one run, or the runs of a period", {
      details: [{ field: "query.run", problem: "not with from/to" }],
    });
  }
  const selected = range ? null : (await selectRun(ctx, query.run, "query.run")).run;
  const runs: RunRow[] = range ? await completeRunsBetween(ctx.store, range.from, range.to) : selected ? [selected] : [];
  const filters = parseRowFilters(query, runs[0]?.decimals ?? 18);
  const state = await auditState(ctx);
  const a: AnswerContext = { request, lastModified: state.changedAt, headers };
  const head = {
    generated_at_utc: state.changedAt,
    query: { run: query.run ?? (range ? null : "latest"), from: range?.from ?? null, to: range?.to ?? null, ...filtersEcho(filters) },
    runs: runs.map((r) => r.id),
  };
  // include_meta puts the request's own block in the JSON (and so in its ETag's seed); the CSV has no place for it.
  const meta = format === "json" ? requestedMeta(a.request, a.headers["x-request-id"], ctx.clock.now()) : undefined;
  const seed = JSON.stringify({ v: state.version, format, head, meta });
  if (format === "json")
    return answerStream(a, seed, "application/json;charset=utf-8", () => exportJsonStream(ctx, meta ? { ...head, meta } : head, runs, filters));
  return answerStream(a, seed, CSV_CONTENT_TYPE, () => exportCsvStream(ctx, runs, filters), "audit-anomalies-export.csv");
}
