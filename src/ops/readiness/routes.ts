import { Elysia } from "elysia";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { csvResponse } from "../../http/formats/csv";
import { operatorCsvDoc } from "../../http/openapi/csv-doc";
import { zeroHistory } from "./probes";
import { noiseExport } from "./service";
import { eventLoopReport } from "./overview";
import { noiseCsv, probeHistoryCsv } from "./csv";
import { ReadinessModel as M } from "./model";
import { ok } from "../../http/envelope";

/** Operator readiness exports; the operator session opens them too, so the readiness page's links work in a browser. */
export function readinessRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:ops-readiness" })
    .use(guards.operator.plugin)
    .get(
      "/admin/ops/readiness/403-noise/export.json",
      async ({ query: q }) => ok(await noiseExport(ctx, { ...q, compact: q.compact === "1", includeWindowsMeta: q.include_windows_meta === "1" })),
      {
        operator: "api",
        query: M.noiseQuery,
        response: { 200: M.noise },
        detail: { summary: "403 noise (403s ÷ requests, and 403s per hour) per 7/14/30-day window against the readiness threshold, with per-day points" },
      },
    )
    .get(
      "/admin/ops/readiness/403-noise/export.csv",
      async ({ query }) => {
        const mode = query.mode ?? "points";
        const exp = await noiseExport(ctx, { days: query.days, windows: query.windows, includeWindowsMeta: true });
        return csvResponse(noiseCsv(exp, mode, query.include_points === "1"), `herald-403-noise-${exp.days}d-${mode}.csv`);
      },
      { operator: "api", query: M.noiseCsvQuery, detail: operatorCsvDoc("The 403 noise export as CSV: per-day rows, or mode=summary for one row per window") },
    )
    .get("/admin/ops/readiness/event-loop.json", () => ok(eventLoopReport(ctx)), {
      operator: "api",
      query: M.eventLoopQuery,
      response: { 200: M.eventLoop },
      detail: {
        summary: "This instance's event-loop lag over the last minute (worst, p99, median) and its state: ok, warn from 100 ms, bad from 1 s",
      },
    })
    .get(
      "/admin/ops/readiness/synthetic-zero-history.csv",
      async ({ query }) => csvResponse(probeHistoryCsv(await zeroHistory(ctx, query)), "herald-synthetic-zero-history.csv"),
      { operator: "api", query: M.zeroHistoryQuery, detail: operatorCsvDoc("Synthetic probe results that failed or came back without data, newest first") },
    );
}
