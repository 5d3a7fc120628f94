import { Elysia } from "elysia";
import { conditionalGet } from "../../http/openapi/contract";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { csvResponse } from "../../http/formats/csv";
import { operatorCsvDoc } from "../../http/openapi/csv-doc";
import { exportPair } from "../../http/exports/pair";
import { requestedMeta } from "../../http/envelope";
import { OPERATOR_REVALIDATE } from "../../http/caching/cache-control";
import { conditionalBytes } from "../../http/caching/conditional";
import { refusal } from "../../http/routes/declare";
import { dayOf, preflightDelta, preflightHistory, selectionOf } from "./service";
import { ANOMALY_DEFAULTS, type AnomalyParams, preflightAnomalies } from "./anomalies";
import { withDefaults } from "../with-defaults";
import { anomaliesCsv, deltaCsv, guardsCsv, historyCsv } from "./csv";
import { currentGuards, envGuards } from "./guards";
import { PreflightModel as M } from "./model";
import { bytesLimitOf, fieldsMaxOf, lastModifiedOf, normalizeSummaryQuery, summaryBody } from "./summary";

const BASE = "/admin/ops/preflight-guards";
const guard = { operator: "api" } as const;

/** The preflight guards' routes (docs/ops-preflight.md): bearer token or operator session (`operator: "api"`). */
export function preflightRoutes(ctx: AppContext, guards: Guards) {
  const guardRows = async (envRows: boolean) => [...(await currentGuards(ctx)), ...(envRows ? envGuards(ctx) : [])];
  return new Elysia({ name: "herald:ops-preflight" })
    .use(guards.operator.plugin)
    .use(
      exportPair({
        paths: [`${BASE}.json`, `${BASE}/export.csv`],
        query: M.guardsQuery,
        guard,
        build: (query) => guardRows(query.include_env_rows === "1"),
        response: { 200: M.guards },
        body: (rows) => {
          const now = ctx.clock.now();
          return { generated_at: now.toISOString(), day: dayOf(now), count: rows.length, guards: rows };
        },
        csv: (rows) => csvResponse(guardsCsv(rows), "herald-preflight-guards.csv"),
        detail: {
          json: { summary: "Every preflight guard field now (secrets as set/unset and a fingerprint)" },
          csv: operatorCsvDoc("The preflight guards as CSV: the same rows and columns as preflight-guards.json"),
        },
      }),
    )
    .use(
      exportPair({
        paths: [`${BASE}/delta.json`, `${BASE}/delta.csv`],
        query: M.deltaQuery,
        guard,
        build: async (query) => preflightDelta(ctx, query.day_offset ?? 1, await selectionOf(ctx, query)),
        response: { 200: M.delta },
        csv: (d) => csvResponse(deltaCsv(d.changes), `herald-preflight-delta-${d.compare_day}.csv`),
        detail: {
          json: { summary: "What changed between the current guard values and the snapshot of day_offset days ago" },
          csv: operatorCsvDoc("The delta's changes as CSV: the same rows and columns as delta.json's changes"),
        },
      }),
    )
    .get(
      `${BASE}/delta.summary.json`,
      async ({ query, request, set }) => {
        // The echoes read the parameters as sent; the query itself already holds the clamped values.
        const sent = new URL(request.url).searchParams;
        const fieldsMax = fieldsMaxOf(sent.get("include_fields_max"));
        const bytesLimit = bytesLimitOf(sent.get("include_fields_bytes_limit"));
        const d = await preflightDelta(ctx, query.day_offset ?? 1, await selectionOf(ctx, query));
        const body = summaryBody(d, {
          includeTimestamps: query.include_compare_timestamps === "1",
          includeFields: query.include_fields === "1",
          fieldsMax,
          bytesLimit,
        });
        // include_meta makes the body (and so its ETag) per request; without it equal state gives equal bytes.
        const meta = requestedMeta(request, set.headers["x-request-id"], ctx.clock.now());
        const bytes = JSON.stringify(meta ? { ...body, meta } : body);
        return conditionalBytes(request, bytes, {
          lastModified: lastModifiedOf(ctx, d).toISOString(),
          cacheControl: OPERATOR_REVALIDATE,
          contentType: "application/json",
        });
      },
      {
        operator: "api",
        transform: ({ query }) => normalizeSummaryQuery(query as Record<string, unknown>),
        query: M.summaryQuery,
        detail: {
          summary:
            "The delta's counts (and optionally timestamps and a bounded changes list); strong ETag, Last-Modified, 304 on If-None-Match / If-Modified-Since",
          ...conditionalGet("etag", "last-modified"),
          responses: {
            200: { description: "The summary", content: { "application/json": { schema: M.summary as unknown as { type: "object" } } } },
            304: { description: "Not modified (ETag, Last-Modified and Cache-Control repeated)" },
            400: refusal("invalid_query naming the parameter"),
            403: refusal("forbidden: no admin token"),
          },
        },
      },
    )
    .use(
      exportPair({
        paths: [`${BASE}/history.json`, `${BASE}/history.csv`],
        query: M.historyQuery,
        guard,
        build: async (query) => preflightHistory(ctx, query.days ?? 30, await selectionOf(ctx, query)),
        response: { 200: M.history },
        body: (h) => ({ ...h, count: h.rows.length }),
        csv: (h) => csvResponse(historyCsv(h.rows), "herald-preflight-history.csv"),
        detail: {
          json: { summary: "Per UTC day and guard field: the snapshot's value, fingerprint and whether it changed" },
          csv: operatorCsvDoc("The history as CSV: the same rows and columns as history.json's rows"),
        },
      }),
    )
    .use(
      exportPair({
        paths: [`${BASE}/anomalies.json`, `${BASE}/anomalies.csv`],
        query: M.anomaliesQuery,
        guard,
        build: async (query) => {
          const p = withDefaults<AnomalyParams>(ANOMALY_DEFAULTS, query);
          return { p, r: await preflightAnomalies(ctx, p, await selectionOf(ctx, query)) };
        },
        response: { 200: M.anomalies },
        body: ({ p, r }) => ({
          from: r.from,
          to: r.to,
          params: p,
          series: r.series,
          evaluated: r.evaluated,
          count: r.anomalies.length,
          anomalies: r.anomalies,
        }),
        csv: ({ r }) => csvResponse(anomaliesCsv(r.anomalies), "herald-preflight-anomalies.csv"),
        detail: {
          json: { summary: "Days whose number of guard changes is a z-score outlier against the days before" },
          csv: operatorCsvDoc("The anomalies as CSV: the same rows and columns as anomalies.json's anomalies"),
        },
      }),
    );
}
