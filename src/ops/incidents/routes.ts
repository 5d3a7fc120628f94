import { Elysia } from "elysia";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { csvResponse, csvTable } from "../../http/formats/csv";
import { downloads } from "../../http/openapi/contract";
import { exportPair } from "../../http/exports/pair";
import { refusal } from "../../http/routes/declare";
import { buildDraft, type Draft, type DraftQuery } from "./draft";
import { draftMarkdown, draftText } from "./draft-render";
import { EXPORT_COLUMNS, exportFilename, exportRows, incidentDetail, listIncidentsPage } from "./export";
import * as M from "./model";
import { ok } from "../../http/envelope";
const rawDoc = (summary: string, type: string, description: string, notFound = true) => ({
  summary,
  responses: {
    200: { description, content: { [type]: { schema: { type: "string" as const } } } },
    400: refusal("invalid_query: a parameter out of range, an unknown value, or until not after since"),
    403: refusal("forbidden: no admin token or operator session"),
    ...(notFound ? { 404: refusal("not_found: no incident at that index") } : {}),
  },
});

/** Incident drafts and the incidents exports for operators (docs/ops-incidents.md). Admin token or operator session. */
export function opsIncidentsRoutes(ctx: AppContext, guards: Guards) {
  // The draft as a file of `type`, inline. Cache-Control: the core's operator default (private, no-store; src/http/caching/cache-control.ts).
  const draftAs =
    (ext: string, type: string, render: (d: Draft) => string) =>
    async ({ query }: { query: DraftQuery }) =>
      new Response(render(await buildDraft(ctx, query)), {
        headers: { "content-type": `${type}; charset=utf-8`, "content-disposition": `inline; filename="incident-draft.${ext}"` },
      });
  return (
    new Elysia({ name: "herald:ops-incidents" })
      .use(guards.admin.plugin)
      // Every route here is a read: it also opens with the operator session (the console's incidents page links them).
      .use(guards.operator.plugin)
      .get("/admin/ops/incidents/draft.json", async ({ query }) => ok(await buildDraft(ctx, query)), {
        operator: "api",
        query: M.draftQuery,
        response: { 200: M.draft },
        detail: { summary: "Incident report draft, structured: title, summary, impact, timeline, top errors, job failures, preflight, placeholder" },
      })
      .get("/admin/ops/incidents/draft.md", draftAs("md", "text/markdown", draftMarkdown), {
        operator: "api",
        query: M.draftQuery,
        detail: {
          ...rawDoc("Incident report draft as Markdown (CommonMark with GFM tables)", "text/markdown", "the draft.json content, in Markdown"),
          ...downloads(),
        },
      })
      .get("/admin/ops/incidents/draft.txt", draftAs("txt", "text/plain", draftText), {
        operator: "api",
        query: M.draftQuery,
        detail: { ...rawDoc("Incident report draft as plain text, at most 80 columns", "text/plain", "the draft.json content, as text"), ...downloads() },
      })
      .get("/admin/ops/incidents", async ({ query }) => ok(await listIncidentsPage(ctx, query)), {
        operator: "api",
        query: M.listQuery,
        response: { 200: M.list },
        detail: { summary: "Status incidents of both sources with their updates, newest first (filters: status, severity, since)" },
      })
      .use(
        exportPair({
          paths: ["/admin/ops/incidents/export.json", "/admin/ops/incidents/export"],
          query: M.exportQuery,
          guard: { operator: "api" },
          build: (query) => exportRows(ctx, query),
          response: { 200: M.exportJson },
          // csvTable neutralises a title or message that starts like a formula.
          csv: (r) => csvResponse(csvTable(r.rows, EXPORT_COLUMNS), `${exportFilename(ctx)}.csv`),
          detail: {
            json: { summary: "The JSON twin of the incidents CSV: the same columns and rows" },
            csv: rawDoc("Incidents as CSV (RFC 4180), one row per incident, as an attachment", "text/csv", "the rows of export.json", false),
          },
        }),
      )
      .get("/admin/ops/incidents/detail.json", async ({ query }) => ok(await incidentDetail(ctx, query)), {
        operator: "api",
        query: M.detailQuery,
        response: { 200: M.detail },
        detail: { summary: "One incident (id, or index 0 = newest) with its full timeline and the errors and job failures of its span" },
      })
  );
}
