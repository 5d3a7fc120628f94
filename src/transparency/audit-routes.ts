import { Elysia } from "elysia";
import { conditionalGet } from "../http/openapi/contract";
import type { AppContext } from "../context";
import { CSV_CONTENT_TYPE, csvDoc } from "../http/csv";
import { metaRequested, requestedMeta } from "../http/envelope";
import { refuses } from "../http/routes/declare";
import { AppError, queryProblem } from "../http/errors";
import { parsePage } from "../http/pagination";
import { alerts } from "./alerts";
import { AuditResponses as R } from "./audit-model";
import { AuditQuery as Q } from "./audit-query-model";
import { alertsCsv, compareCsv, diffCsv } from "./csv";
import { listDeclarations } from "./declarations";
import { compare, diffExport } from "./diffs";
import { exportCsvStream, exportJsonStream } from "./exports";
import { filtersEcho, parseRange, parseRowFilters, type RowFilterQuery } from "./filters";
import { GLOSSARY, OVERALL_RULE, SEVERITIES, SEVERITY_RULE, TRANSACTION_DELTA_RULE } from "./glossary";
import { AnswerCache, answerJson, answerStream, type AnswerContext } from "./http-cache";
import { runsList, summary, trend } from "./reports";
import { selectRun, type RunRow } from "./runs";
import { schemaRegistry } from "./schema-registry";
import { auditState, dataTime } from "./state";
import { completeRunsBetween } from "./store/runs";
import { currentThresholds, pctQuery, thresholdHistory } from "./thresholds";
import { listTriage } from "./triage";

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

export function auditRoutes(ctx: AppContext) {
  const now = () => ctx.clock.now();
  // Answers are built once per audit data version and request target (http-cache.ts AnswerCache): a poller's
  // request reads the version from memory (state.ts) and the cache. include_meta answers are per request, never cached.
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
  const decimalsHint = () => completeOrAny(ctx);
  return new Elysia({ name: "herald:transparency-audit" })
    .get(
      `${P}/summary.json`,
      ({ query, request, set }) =>
        json(request, set.headers, async () => {
          const sel = await selectRun(ctx, query.run, "query.run");
          return summary(ctx, sel, flag(query.include_top_anomalies, true), query.top_limit ?? 10);
        }),
      {
        query: Q.summary,
        response: { 200: R["summary.json"], ...errs },
        detail: doc("The selected run's totals and its most severe anomalies (default: the latest complete run)"),
      },
    )
    .get(
      `${P}/runs.json`,
      ({ query, request, set }) =>
        json(request, set.headers, async () => {
          const sel = await selectRun(ctx, query.run, "query.run");
          return runsList(ctx, sel, parsePage(query));
        }),
      { query: Q.runs, response: { 200: R["runs.json"], ...errs }, detail: doc("Audit runs, newest first, with their aggregates; poll every 5–15 minutes") },
    )
    .get(
      `${P}/trend.json`,
      ({ query, request, set }) =>
        json(request, set.headers, async () => {
          const sel = await selectRun(ctx, query.run, "query.run");
          const filters = parseRowFilters(query, sel.run?.decimals ?? (await decimalsHint()));
          const input = {
            metric: query.metric === "rows" ? ("rows" as const) : ("sigs" as const),
            limit: query.limit ?? 30,
            includeStatusCounts: flag(query.include_status_counts, true),
            filters,
          };
          return trend(ctx, sel, input);
        }),
      {
        query: Q.trend,
        response: { 200: R["trend.json"], ...errs },
        detail: doc("One point per complete run up to the selected one: rows or signatures with anomalies, optionally filtered"),
      },
    )
    .get(
      `${P}/alerts.json`,
      ({ query, request, set }) =>
        json(request, set.headers, async () => {
          const sel = await selectRun(ctx, query.run, "query.run");
          return alerts(ctx, sel, overridesOf(query), flag(query.include_recommendations, false));
        }),
      {
        query: Q.alerts,
        response: { 200: R["alerts.json"], ...errs },
        detail: doc("Whether the selected run should alert: its rise over the previous complete run against the thresholds"),
      },
    )
    .get(
      `${P}/alerts.csv`,
      ({ query, request, set }) =>
        csv(request, set.headers, "audit-anomalies-alerts.csv", async () => {
          const sel = await selectRun(ctx, query.run, "query.run");
          return alertsCsv(await alerts(ctx, sel, overridesOf(query), false));
        }),
      { query: Q.alertsCsv, detail: csvDetail("alerts.json as one CSV record") },
    )
    .get(
      `${P}/diff/compare.json`,
      ({ query, request, set }) =>
        json(request, set.headers, async () => {
          const a = await selectRun(ctx, query.run_a, "query.run_a", "previous");
          const b = await selectRun(ctx, query.run_b, "query.run_b", "latest");
          return compare(ctx, a, b, flag(query.include_rows, true), query.row_limit ?? 50);
        }),
      {
        query: Q.compare,
        response: { 200: R["diff/compare.json"], ...errs },
        detail: doc("Two runs side by side: counts per anomaly type and severity, and their deltas"),
      },
    )
    .get(
      `${P}/diff/compare.csv`,
      ({ query, request, set }) =>
        csv(request, set.headers, "audit-anomalies-compare.csv", async () => {
          const a = await selectRun(ctx, query.run_a, "query.run_a", "previous");
          const b = await selectRun(ctx, query.run_b, "query.run_b", "latest");
          return compareCsv(await compare(ctx, a, b, flag(query.include_rows, true), query.row_limit ?? 50));
        }),
      { query: Q.compare, detail: csvDetail("diff/compare.json's rows") },
    )
    .get(
      `${P}/diff/export.json`,
      ({ query, request, set }) =>
        json(request, set.headers, async () => {
          const sel = await selectRun(ctx, query.run, "query.run");
          return diffExport(ctx, sel, flag(query.include_rows, true), query.row_limit ?? 50);
        }),
      {
        query: Q.diffExport,
        response: { 200: R["diff/export.json"], ...errs },
        detail: doc("The selected run against the complete run before it, with pct_delta"),
      },
    )
    .get(
      `${P}/diff/export`,
      ({ query, request, set }) =>
        csv(request, set.headers, "audit-anomalies-diff.csv", async () => {
          const sel = await selectRun(ctx, query.run, "query.run");
          return diffCsv(await diffExport(ctx, sel, flag(query.include_rows, true), query.row_limit ?? 50));
        }),
      { query: Q.diffExport, detail: csvDetail("diff/export.json's rows with pct_delta") },
    )
    .get(`${P}/export.json`, ({ query, request, set }) => exportAnswer(ctx, request, set.headers, query, "json"), {
      query: Q.export,
      response: { 200: R["export.json"], ...errs },
      detail: doc("Every row of the selected run(s), streamed: filter by severity, types, signature, min_abs_delta; from/to select runs by label"),
    })
    .get(`${P}/export`, ({ query, request, set }) => exportAnswer(ctx, request, set.headers, query, "csv"), {
      query: Q.export,
      detail: csvDetail("export.json's rows, streamed"),
    })
    .get(
      `${P}/glossary.json`,
      ({ request, set }) =>
        json(request, set.headers, async () => {
          const c = ctx.config.chain;
          const body = {
            generated_at_utc: await dataTime(ctx),
            count: GLOSSARY.length,
            glossary: GLOSSARY,
            severities: SEVERITIES,
            severity_rule: SEVERITY_RULE,
            overall_rule: OVERALL_RULE,
            transaction_delta_rule: TRANSACTION_DELTA_RULE,
            tracked_wallets: { treasury: [...c.treasuryWallets], reserve: [...c.reserveWallets], lp: [...c.lpWallets], mint: c.tokenMint ?? null },
          };
          return body;
        }),
      { query: Q.plain, response: { 200: R["glossary.json"], ...errs }, detail: doc("Every anomaly type with its description and the rule that decides it") },
    )
    .get(
      `${P}/threshold-history.json`,
      ({ query, request, set }) =>
        json(request, set.headers, async () => {
          const limit = query.limit ?? 100;
          const h = await thresholdHistory(ctx, limit);
          return {
            generated_at_utc: await dataTime(ctx),
            limit,
            total: h.total,
            count: h.rows.length,
            current: await currentThresholds(ctx.store),
            rows: h.rows,
            query: { limit, offset: 0 as const, cursor: null },
            pagination: { has_more: h.total > h.rows.length, next_offset: null, next_cursor: null },
          };
        }),
      {
        query: Q.thresholdHistory,
        response: { 200: R["threshold-history.json"], ...errs },
        detail: doc("Every threshold change (who, when, why), newest first, and the thresholds in force"),
      },
    )
    .get(
      `${P}/triage.json`,
      ({ query, request, set }) =>
        json(request, set.headers, async () => {
          const page = parsePage(query);
          if (page.cursor) throw queryProblem("cursor", "is not used by triage.json; page with offset (pagination.next_offset)");
          return { generated_at_utc: await dataTime(ctx), ...(await listTriage(ctx, query.status, page)) };
        }),
      {
        query: Q.triage,
        response: { 200: R["triage.json"], ...errs },
        detail: doc("Operators' triage of anomalous signatures (status, owner, eta_utc); filter by status"),
      },
    )
    .get(
      `${P}/declared-movements.json`,
      ({ request, set }) =>
        json(request, set.headers, async () => {
          const movements = await listDeclarations(ctx);
          return { generated_at_utc: await dataTime(ctx), count: movements.length, movements };
        }),
      {
        query: Q.plain,
        response: { 200: R["declared-movements.json"], ...errs },
        detail: doc("Declared treasury movements (active and retracted) and how many transactions each covered"),
      },
    )
    .get(
      `${P}/schema-registry.json`,
      ({ request, set }) => json(request, set.headers, async () => schemaRegistry(ctx.config.publicBaseUrl, await dataTime(ctx))),
      {
        query: Q.plain,
        response: { 200: R["schema-registry.json"], ...errs },
        detail: doc("A versioned JSON Schema (draft 2020-12) for every transparency answer"),
      },
    );
}

/** The decimals to check min_abs_delta against when no run is selected: the newest run's, else 18 (the most a mint can have is far less). */
async function completeOrAny(ctx: AppContext): Promise<number> {
  const run = (await selectRun(ctx, undefined, "query.run")).run;
  return run?.decimals ?? 18;
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
