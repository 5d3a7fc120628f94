import { Elysia } from "elysia";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { csvResponse } from "../../http/csv";
import { refusal } from "../../http/routes/declare";
import { buildDraft } from "./draft";
import { draftMarkdown, draftText } from "./draft-render";
import { exportCsv, exportFilename, exportRows, incidentDetail, listIncidentsPage } from "./export";
import * as M from "./model";

const ok = <T extends object>(body: T) => ({ success: true as const, ...body });
const rawDoc = (summary: string, type: string, description: string, notFound = true) => ({
  summary,
  responses: {
    200: { description, content: { [type]: { schema: { type: "string" as const } } } },
    400: refusal("invalid_query: a parameter out of range, an unknown value, or until not after since"),
    403: refusal("forbidden: no admin token or operator session"),
    ...(notFound ? { 404: refusal("not_found: no incident at that index") } : {}),
  },
});
// Cache-Control: the core's operator default (private, no-store; src/http/cache-control.ts).
const text = (body: string, type: string, filename: string) =>
  new Response(body, { headers: { "content-type": type, "content-disposition": `inline; filename="${filename}"` } });

/** Incident drafts and the incidents exports for operators (docs/ops-incidents.md). Admin token or operator session. */
export function opsIncidentsRoutes(ctx: AppContext, guards: Guards) {
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
      .get(
        "/admin/ops/incidents/draft.md",
        async ({ query }) => text(draftMarkdown(await buildDraft(ctx, query)), "text/markdown; charset=utf-8", "incident-draft.md"),
        {
          operator: "api",
          query: M.draftQuery,
          detail: rawDoc("Incident report draft as Markdown (CommonMark with GFM tables)", "text/markdown", "the draft.json content, in Markdown"),
        },
      )
      .get(
        "/admin/ops/incidents/draft.txt",
        async ({ query }) => text(draftText(await buildDraft(ctx, query)), "text/plain; charset=utf-8", "incident-draft.txt"),
        {
          operator: "api",
          query: M.draftQuery,
          detail: rawDoc("Incident report draft as plain text, at most 80 columns", "text/plain", "the draft.json content, as text"),
        },
      )
      .get("/admin/ops/incidents", async ({ query }) => ok(await listIncidentsPage(ctx, query)), {
        operator: "api",
        query: M.listQuery,
        response: { 200: M.list },
        detail: { summary: "Status incidents of both sources with their updates, newest first (filters: status, severity, since)" },
      })
      .get("/admin/ops/incidents/export", async ({ query }) => csvResponse(exportCsv((await exportRows(ctx, query)).rows), `${exportFilename(ctx)}.csv`), {
        operator: "api",
        query: M.exportQuery,
        detail: rawDoc("Incidents as CSV (RFC 4180), one row per incident, as an attachment", "text/csv", "the rows of export.json", false),
      })
      .get("/admin/ops/incidents/export.json", async ({ query }) => ok(await exportRows(ctx, query)), {
        operator: "api",
        query: M.exportQuery,
        response: { 200: M.exportJson },
        detail: { summary: "The JSON twin of the incidents CSV: the same columns and rows" },
      })
      .get("/admin/ops/incidents/detail.json", async ({ query }) => ok(await incidentDetail(ctx, query)), {
        operator: "api",
        query: M.detailQuery,
        response: { 200: M.detail },
        detail: { summary: "One incident (id, or index 0 = newest) with its full timeline and the errors and job failures of its span" },
      })
  );
}
