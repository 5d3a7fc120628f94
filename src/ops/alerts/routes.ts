import { Elysia } from "elysia";
import { downloads, sendsHeaders } from "../../http/openapi/contract";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { csvResponse } from "../../http/formats/csv";
import { exportPair } from "../../http/exports/pair";
import { refusal } from "../../http/routes/declare";
import { alertsExport, alertsZip, exportStamp, runsCsv, windowRuns } from "./export";
import { ALERTS_DEFAULTS, AlertsModel as M, USAGE_DEFAULTS } from "./model";
import { exportUsage, usageCsv } from "../export-usage/service";
import { renderUsageSvg, USAGE_CHART_BOUNDS, usageLegend } from "../export-usage/chart";
import { renderPng } from "../digest/chart-renderer";
import { ok } from "../../http/envelope";

const BASE = "/admin/ops/alerts-monitor";
const LEGEND = sendsHeaders({ "X-Usage-Legend": "The chart's series and their colours (JSON)" });
const fileDoc = (summary: string, type: string, description: string, binary = false) => ({
  summary,
  responses: {
    200: { description, content: { [type]: { schema: binary ? { type: "string" as const, format: "binary" } : { type: "string" as const } } } },
    400: refusal("invalid_query naming the parameter (an unknown source or status, days, w or h out of bounds)"),
    403: refusal("forbidden: no admin token or operator session"),
  },
});

const filterOf = (q: typeof M.windowQuery.static) => ({ days: q.days ?? ALERTS_DEFAULTS.days, source: q.source ?? "all", status: q.status ?? "all" });
const usageOf = (ctx: AppContext, q: { days?: number; source?: "all" | "export" | "token" }) =>
  exportUsage(ctx, q.days ?? USAGE_DEFAULTS.days, q.source ?? "all");
type Usage = Awaited<ReturnType<typeof exportUsage>>;
const attachment = (name: string) => `attachment; filename="${name}"`;

/** The alerts monitor's exports and the export-usage read-models (docs/ops-alerts.md): bearer token or operator session. */
export function alertsMonitorRoutes(ctx: AppContext, guards: Guards) {
  /** The usage chart of the query's window, drawn w×h by `render`, with its legend in a header. */
  const chart =
    (render: (r: Usage, w: number, h: number) => Promise<Uint8Array> | string, type: string) =>
    async ({ query }: { query: typeof M.chartQuery.static }) => {
      const r = await usageOf(ctx, query);
      const body = await render(r, query.w ?? USAGE_CHART_BOUNDS.w.default, query.h ?? USAGE_CHART_BOUNDS.h.default);
      return new Response(body, { headers: { "content-type": type, "x-usage-legend": usageLegend(r) } });
    };
  return new Elysia({ name: "herald:ops-alerts-monitor" })
    .use(guards.operator.plugin)
    .get(
      `${BASE}/export.json`,
      async ({ query, set }) => {
        const f = { ...filterOf(query), limit: query.limit ?? ALERTS_DEFAULTS.limit, offset: query.offset ?? ALERTS_DEFAULTS.offset };
        set.headers["content-disposition"] = attachment(`herald-alerts-${exportStamp(ctx)}.json`);
        return ok(await alertsExport(ctx, f));
      },
      {
        operator: "api",
        query: M.exportQuery,
        response: { 200: M.exportJson },
        detail: { summary: "Alert runs of the window (status checks, transparency, webhook dead letters, preflight), newest first, paged", ...downloads() },
      },
    )
    .get(
      `${BASE}/export.zip`,
      async ({ query }) =>
        new Response(await alertsZip(ctx, filterOf(query)), {
          headers: { "content-type": "application/zip", "content-disposition": attachment(`herald-alerts-${exportStamp(ctx)}.zip`) },
        }),
      {
        operator: "api",
        query: M.windowQuery,
        detail: fileDoc(
          "The window's alerts as a ZIP: alerts.json, alerts.csv, runs.csv and manifest.json (bytes and sha256 of each)",
          "application/zip",
          "A ZIP archive",
          true,
        ),
      },
    )
    .get(
      `${BASE}/runs/export`,
      async ({ query }) => csvResponse(runsCsv(await windowRuns(ctx, filterOf(query))), `herald-alert-runs-${exportStamp(ctx)}.csv`),
      {
        operator: "api",
        query: M.windowQuery,
        detail: fileDoc(
          "One CSV record per alert run of the window, labelled by all its sources: alert counts by status and the worst status",
          "text/csv",
          "RFC 4180 CSV with a header row",
        ),
      },
    )
    .use(
      exportPair({
        paths: [`${BASE}/export-usage.json`, `${BASE}/export-usage.csv`],
        query: M.usageQuery,
        guard: { operator: "api" },
        build: (query) => usageOf(ctx, query),
        response: { 200: M.usageJson },
        body: (r, headers) => {
          headers["content-disposition"] = attachment(`herald-export-usage-${exportStamp(ctx)}.json`);
          return r;
        },
        csv: (r) => csvResponse(usageCsv(r), `herald-export-usage-${exportStamp(ctx)}.csv`),
        detail: {
          json: { summary: "Operator-console export downloads per UTC day and export: downloads, bytes, distinct actors", ...downloads() },
          csv: fileDoc("export-usage.json's rows as CSV (day, export, downloads, bytes, actors)", "text/csv", "RFC 4180 CSV with a header row"),
        },
      }),
    )
    .get(
      `${BASE}/export-usage.png`,
      // The PNG is drawn in the renderer thread (src/ops/digest/chart-renderer.ts; 503 when busy); the SVG is text, drawn here.
      chart((r, w, h) => renderPng({ chart: "usage", report: { series: r.series, query: r.query, window: r.window }, w, h }), "image/png"),
      {
        operator: "api",
        query: M.chartQuery,
        detail: {
          ...fileDoc("Downloads per day as stacked bars by source, w×h pixels; X-Usage-Legend names the series (JSON)", "image/png", "The chart", true),
          ...LEGEND,
        },
      },
    )
    .get(`${BASE}/export-usage.svg`, chart(renderUsageSvg, "image/svg+xml; charset=utf-8"), {
      operator: "api",
      query: M.chartQuery,
      detail: { ...fileDoc("The same chart as SVG; X-Usage-Legend names the series (JSON)", "image/svg+xml", "The chart"), ...LEGEND },
    });
}
