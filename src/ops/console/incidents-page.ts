import { Elysia, t } from "elysia";
import { consolePage, pageDoc, refusingPage, wantsHtml, when } from "../../auth/console-kit";
import type { OperatorRequest } from "../../auth/session-plugin";
import { AppError } from "../../http/errors";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { intQuery } from "../../http/params";
import { listIncidentsPage } from "../incidents/export";
import { type DraftResult, draftQueryFields, incidentDraft } from "./incidents-draft";
import { INCIDENTS_PATH as PATH, type IncidentRowView, incidentsBody } from "./incidents-view";
import { ignoredMetaQuery } from "../../http/envelope";

// GET /admin/console/incidents: the status incidents, open ones first (each opens its own page), the resolved
// ones paged, and the incident draft in Markdown in a read-only text area — select it and copy it into the
// postmortem or the chat; no JavaScript needed. The draft's window and incident are chosen with a GET form
// (incidents-draft.ts); the same draft downloads as draft.md with the session cookie. Read-only: incidents are
// opened and updated through /admin/status/incidents.

const PAGE_SIZE = 20;
const OPEN_SHOWN = 100;
const MAX_OFFSET = 100_000;

const PageQuery = t.Object({
  ...ignoredMetaQuery,
  offset: intQuery({ minimum: 0, maximum: MAX_OFFSET, defaultValue: 0, description: "resolved incidents to skip (the Older link)" }),
  ...draftQueryFields,
});

const SEVERITY_BADGE: Record<string, string> = { warn: "warn", bad: "bad" };

type Listed = Awaited<ReturnType<typeof listIncidentsPage>>["incidents"][number];
const rowOf = (i: Listed): IncidentRowView => ({
  id: i.id,
  title: i.title,
  badge: i.status === "open" ? (SEVERITY_BADGE[i.current_severity ?? i.severity] ?? "warn") : "ok",
  state: i.status === "open" ? `open: ${i.current_severity ?? i.severity}` : "resolved",
  started: when(i.started_at)!,
  ended: when(i.ended_at) ?? "–",
  source: i.source,
  components: i.components.join(", ") || "–",
});

/** The page with `draft` (its text, or the error line in its place, and its status) and resolved incidents from `offset`. */
async function render(ctx: AppContext, operator: OperatorRequest, offset: number, draft: DraftResult): Promise<Response> {
  // The pager keeps the draft's parameters (a person reading older incidents keeps their draft).
  const pageAt = (o: number) => {
    const p = new URLSearchParams(draft.query);
    if (o > 0) p.set("offset", String(o));
    return `${PATH}?${p.toString()}#recent`;
  };
  const open = await listIncidentsPage(ctx, { status: "open", limit: OPEN_SHOWN });
  const recent = await listIncidentsPage(ctx, { status: "resolved", limit: PAGE_SIZE, offset });
  const dq = draft.query;
  return consolePage(
    operator,
    "Incidents",
    PATH,
    incidentsBody({
      generatedAt: when(ctx.clock.now().toISOString())!,
      open: open.incidents.map(rowOf),
      openMore: open.pagination.has_more,
      recent: recent.incidents.map(rowOf),
      range: recent.count ? `${offset + 1}–${offset + recent.count} of ${recent.total} resolved.` : `${recent.total} resolved in all.`,
      newer: offset > 0 ? pageAt(Math.max(0, offset - PAGE_SIZE)) : null,
      older: recent.pagination.has_more ? pageAt(offset + recent.count) : null,
      form: draft.form,
      draft: draft.markdown,
      draftError: draft.error,
      draftQuery: dq,
      exports: [
        ["Incidents (JSON, paged)", "/admin/ops/incidents"],
        ["Open incidents (JSON)", "/admin/ops/incidents?status=open"],
        ["Incidents (CSV)", "/admin/ops/incidents/export"],
        ["Incidents (JSON twin of the CSV)", "/admin/ops/incidents/export.json"],
        ["The newest incident in detail (JSON)", "/admin/ops/incidents/detail.json"],
        // A refused draft has nothing to download: its links would only repeat the refusal.
        ...(draft.markdown === null
          ? []
          : ([
              ["This draft (Markdown)", `/admin/ops/incidents/draft.md?${dq}`],
              ["This draft (plain text, 80 columns)", `/admin/ops/incidents/draft.txt?${dq}`],
              ["This draft (JSON)", `/admin/ops/incidents/draft.json?${dq}`],
            ] as const)),
        ["Public incidents (JSON)", "/api/public/system-status/incidents"],
      ],
    }),
    draft.status,
  );
}

export function incidentsPageRoutes(ctx: AppContext, guards: Guards) {
  // A parameter the schema refuses (hours=9999, offset past its bound): the default draft's place holds the message.
  const refuseWith = (operator: OperatorRequest) => async (status: number, error: string) =>
    render(ctx, operator, 0, { ...(await incidentDraft(ctx, {})), markdown: null, error, status });
  const DOC = pageDoc("Incidents (HTML page): open and recent incidents linking to each one's page, and the incident draft in Markdown to copy", PATH);
  return new Elysia({ name: "herald:console-incidents" }).use(guards.operator.plugin).get(
    PATH,
    async ({ operator, query, request }) => {
      const { offset, ...rawDraft } = query;
      const draft = await incidentDraft(ctx, {
        ...rawDraft,
        hours: rawDraft.hours === undefined ? undefined : String(rawDraft.hours),
        index: rawDraft.index === undefined ? undefined : String(rawDraft.index),
      });
      // A browser gets the page with the draft's message; a script (no text/html in Accept) the JSON envelope.
      if (draft.error !== null && !wantsHtml(request)) throw new AppError(draft.status === 404 ? "not_found" : "invalid_query", draft.error);
      return render(ctx, operator, offset ?? 0, draft);
    },
    {
      operator: refusingPage(refuseWith),
      query: PageQuery,
      detail: {
        ...DOC,
        responses: {
          ...DOC.responses,
          404: {
            description: "not_found: no incident at the draft's index — the page with the message for a browser, JSON for a script",
            content: DOC.responses[400].content,
          },
        },
        description:
          "Draft parameters out of bounds, or a draft the window cannot make (no incident at that index), show the page with an error line in place of the draft (400 or 404, text/html).",
      },
    },
  );
}
