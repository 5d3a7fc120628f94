import { Elysia } from "elysia";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { csvResponse, csvTable } from "../../http/formats/csv";
import { operatorCsvDoc } from "../../http/openapi/csv-doc";
import { exportPair } from "../../http/exports/pair";
import { bodyChecks, bodyRule, downloads } from "../../http/openapi/contract";
import { refusal, refuses } from "../../http/routes/declare";
import { listAnswer, parsePage } from "../../http/pagination";
import { buildDigest } from "./service";
import { digestRows, EXPORT_COLUMNS, exportFilename } from "./export";
import { digestParamsOf } from "./findings";
import { DigestModel as M } from "./model";
import { createSuppression, exportSuppressions, listSuppressions, revokeSuppression } from "./suppressions";
import { renderPng } from "./chart-renderer";
import { TREND_DEFAULT_H, TREND_DEFAULT_W } from "./trend-png";
import { ok } from "../../http/envelope";

const INVALID = "invalid_query: a parameter out of range, named in details";

const BASE = "/admin/ops/403-digest";

export function digestRoutes(ctx: AppContext, guards: Guards) {
  return (
    new Elysia({ name: "herald:ops-403-digest" })
      .use(guards.admin.plugin)
      // The reads also open with the operator session (the console's 403 digest page links them); the rule
      // changes stay bearer-only here (the page has its own CSRF forms).
      .use(guards.operator.plugin)
      .get(BASE, async ({ query }) => ok(await buildDigest(ctx, digestParamsOf(query))), {
        operator: "api",
        query: M.query,
        response: { 200: M.digest },
        detail: { summary: "403s of the window per hour against a baseline, grouped by route, partner key and client prefix, with findings" },
      })
      .use(
        exportPair({
          paths: [`${BASE}/export.json`, `${BASE}/export.csv`],
          query: M.query,
          guard: { operator: "api" },
          build: (query) => buildDigest(ctx, digestParamsOf(query)),
          response: { 200: M.exportJson },
          body: (d, headers) => {
            const rows = digestRows(d);
            headers["content-disposition"] = `attachment; filename="${exportFilename(d, "json")}"`;
            return { generated_at: d.generated_at, params: d.params, columns: [...EXPORT_COLUMNS], count: rows.length, rows };
          },
          csv: (d) => csvResponse(csvTable(digestRows(d), EXPORT_COLUMNS), exportFilename(d, "csv")),
          detail: {
            json: { summary: "The digest as one flat table (hours, groups, findings, suppressed findings); the JSON twin of export.csv", ...downloads() },
            csv: operatorCsvDoc(
              "The digest table as RFC 4180 CSV: the same rows and columns as export.json",
              "A header line, then one record per row of export.json",
              INVALID,
            ),
          },
        }),
      )
      .get(
        `${BASE}/probe-trend.png`,
        async ({ query }) => {
          const d = await buildDigest(ctx, digestParamsOf(query));
          // Drawn in the renderer thread (src/ops/digest/chart-renderer.ts): 503 with Retry-After when it is busy.
          const png = await renderPng({
            chart: "trend",
            hours: d.hours,
            mode: d.params.baseline_mode,
            w: query.w ?? TREND_DEFAULT_W,
            h: query.h ?? TREND_DEFAULT_H,
          });
          return new Response(png, {
            headers: { "content-type": "image/png", "content-disposition": `inline; filename="${exportFilename(d, "png")}"` },
          });
        },
        {
          operator: "api",
          query: M.trendQuery,
          detail: {
            ...downloads(),
            summary: "PNG chart of the window's 403s per hour (counted, suppressed, spike hours) against the baseline; w×h pixels",
            responses: {
              200: { description: "The chart", content: { "image/png": { schema: { type: "string" as const, format: "binary" } } } },
              400: refusal(INVALID),
              403: refusal("forbidden: no admin token"),
            },
          },
        },
      )
      .get(
        `${BASE}/suppressions`,
        async ({ query }) => ok(listAnswer("rules", await listSuppressions(ctx, parsePage(query), query.state), { state: query.state ?? null })),
        {
          operator: "api",
          query: M.suppressionListQuery,
          response: { 200: M.suppressionList },
          detail: { summary: "Suppression rules, newest first, each with its state now (active, expired, revoked)" },
        },
      )
      .post(
        `${BASE}/suppressions`,
        async ({ body, admin, set }) => {
          const rule = await createSuppression(ctx, admin, body);
          set.status = 201;
          return ok({ rule });
        },
        {
          admin: true,
          body: M.suppressionBody,
          response: { 201: M.suppressionOne },
          detail: {
            summary: "Add a rule (path pattern and/or partner key and/or client prefix, reason, owner, expiry ≤ 90 days; audited)",
            ...bodyRule(M.suppressionRule),
            ...bodyChecks(M.suppressionChecks),
          },
        },
      )
      .post(`${BASE}/suppressions/:id/revoke`, async ({ params, admin }) => ok({ rule: await revokeSuppression(ctx, admin, params.id) }), {
        admin: true,
        params: M.suppressionParams,
        response: { 200: M.suppressionOne, ...refuses(404, 409) },
        detail: { summary: "End a rule now (audited); 409 when it was already revoked" },
      })
      .get(
        `${BASE}/suppressions/export.json`,
        async ({ set }) => {
          const rules = await exportSuppressions(ctx);
          set.headers["content-disposition"] = 'attachment; filename="403-digest-suppressions.json"';
          return ok({ generated_at: ctx.clock.now().toISOString(), count: rules.length, rules });
        },
        {
          operator: "api",
          query: M.exportQuery,
          response: { 200: M.suppressionExport },
          detail: { summary: "Every suppression rule (the rules file), oldest first, with its state now", ...downloads() },
        },
      )
  );
}
