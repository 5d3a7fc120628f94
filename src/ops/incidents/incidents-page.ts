import { consoleRoute } from "../../console/kit";
import type { Guards } from "../../auth/guards";
import { badge, choice, dataTable, link, type TableSpec, when } from "../../console/frame";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { compileHtml, type SafeHtml } from "../../http/formats/html";
import { intQuery } from "../../http/params";
import { listIncidentsPage } from "./export";
import { type DraftFormView, draftQueryFields, incidentDraft } from "./draft-form";

// GET /admin/console/incidents: open incidents, resolved ones paged, and the draft in Markdown in a read-only text
// area to copy (no JavaScript), chosen with a GET form (draft-form.ts). Read-only: incidents change through
// /admin/status/incidents.

const PATH = "/admin/console/incidents";
const PAGE_SIZE = 20;
const OPEN_SHOWN = 100;
const SEVERITY_BADGE: Record<string, string> = { warn: "warn", bad: "bad" };
type Listed = Awaited<ReturnType<typeof listIncidentsPage>>["incidents"][number];

const incidentTable = (id: string, rows: Listed[], paged: Pick<TableSpec<Listed>, "empty" | "pages"> = {}) =>
  dataTable({
    id,
    rows,
    ...paged,
    rowId: (i) => `incident-${i.id}`,
    columns: {
      Incident: (i) => link(`/admin/ops/incidents/${i.id}`, `#${i.id} ${i.title}`),
      State: (i) =>
        i.status === "open"
          ? badge(SEVERITY_BADGE[i.current_severity ?? i.severity] ?? "warn", `open: ${i.current_severity ?? i.severity}`)
          : badge("ok", "resolved"),
      Started: (i) => when(i.started_at),
      Ended: (i) => when(i.ended_at) ?? "–",
      Source: { class: "short", cell: (i) => i.source },
      Components: (i) => i.components.join(", ") || "–",
    },
  });

const body = compileHtml<{
  open: number;
  openRows: SafeHtml | null;
  openMore: boolean;
  recent: SafeHtml;
  form: DraftFormView;
  selects: SafeHtml[];
  draft: string | null;
  draftQuery: string;
}>(
  "console-incidents",
  `<style>textarea.draft { display:block; width:100%; min-height:22em; font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; border:1px solid var(--line); border-radius:6px; padding:8px 10px; background:var(--bg); white-space:pre-wrap; overflow-wrap:anywhere; }</style>
<section id="open" class="summary <%= it.open ? "attention" : "ready" %>"><p><strong id="open-count"><%= it.open %></strong> open.</p></section>
<%= it.openRows %>
<% if (it.openMore) { %><p class="muted">More are open than shown: <a href="/admin/ops/incidents?status=open">all of them (JSON)</a>.</p><% } %>
<section id="recent"><h2>Recently resolved</h2>
<%= it.recent %></section>
<section id="draft-section"><h2>Draft</h2>
<p class="muted">A first draft of the incident report in Markdown, from the incidents, errors and failed jobs of the window: select all in the box and copy it into the postmortem or the chat.</p>
<form method="get" action="${PATH}#draft-section" class="filters" id="draft-form">
<label>Last hours <input type="number" name="hours" min="1" max="<%= it.form.maxHours %>" value="<%= it.form.hours %>" required></label>
<label>Or since (UTC) <input type="datetime-local" name="since" value="<%= it.form.since %>"></label>
<label>Until (UTC; empty = now) <input type="datetime-local" name="until" value="<%= it.form.until %>"></label>
<label>Incident (0 = newest) <input type="number" name="index" min="0" max="<%= it.form.maxIndex %>" value="<%= it.form.index %>" required></label>
<% for (const s of it.selects) { %><%= s %><% } %>
<button type="submit" id="draft-apply">Draft</button></form>
<% if (it.draft !== null) { %><p><textarea class="draft" id="draft" readonly rows="22" aria-label="The incident draft in Markdown"><%= it.draft %></textarea></p>
<p><a id="draft-md" href="/admin/ops/incidents/draft.md?<%= it.draftQuery %>" download="incident-draft.md">Download draft.md</a> · <a id="draft-txt" href="/admin/ops/incidents/draft.txt?<%= it.draftQuery %>">as plain text</a> · <a id="draft-json" href="/admin/ops/incidents/draft.json?<%= it.draftQuery %>">as JSON</a></p><% } %></section>`,
);

export function incidentsPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: PATH,
    title: "Incidents",
    lead: "The status page's incidents, automatic and operator-made; open ones first.",
    summary: "Incidents (HTML page): open and recent incidents linking to each one's page, and the incident draft in Markdown to copy",
    refusals: { 404: "not_found: no incident at the draft's index" },
    query: {
      offset: intQuery({ minimum: 0, maximum: 100_000, defaultValue: 0, description: "resolved incidents to skip (the Older link)" }),
      ...draftQueryFields,
    },
    async load({ offset = 0, ...raw }, call) {
      const draft = await incidentDraft(ctx, { ...raw, hours: raw.hours?.toString(), index: raw.index?.toString() });
      // A draft the window cannot make (or parameters out of bounds): the page with the message in the draft's place.
      if (draft.error !== null) call.refuse(new AppError(draft.status === 404 ? "not_found" : "invalid_query", draft.error));
      return {
        offset,
        draft,
        open: await listIncidentsPage(ctx, { status: "open", limit: OPEN_SHOWN }),
        recent: await listIncidentsPage(ctx, { status: "resolved", limit: PAGE_SIZE, offset }),
      };
    },
    view: ({ offset, draft: loaded, open, recent }, { refused }) => {
      // A refused page has no draft: its message stands in the draft's place.
      const draft = refused ? { ...loaded, markdown: null } : loaded;
      // The pager keeps the draft's parameters (a person reading older incidents keeps their draft).
      const pageAt = (o: number) => {
        const p = new URLSearchParams(draft.query);
        if (o > 0) p.set("offset", String(o));
        return `${PATH}?${p.toString()}#recent`;
      };
      const c = draft.form.choices;
      return body({
        open: open.incidents.length,
        openRows: open.incidents.length ? incidentTable("open-rows", open.incidents) : null,
        openMore: open.pagination.has_more,
        recent: incidentTable("recent-rows", recent.incidents, {
          empty: "None.",
          pages: { id: "recent-pages", offset, pageSize: PAGE_SIZE, total: recent.total, hasMore: recent.pagination.has_more, href: pageAt },
        }),
        form: draft.form,
        selects: [
          choice({ label: "Severity", name: "severity", options: c.severity, value: draft.form.severity }),
          choice({ label: "Timeline", name: "context", options: c.context, value: draft.form.context }),
          choice({ label: "Template", name: "template", options: c.template, value: draft.form.template }),
          choice({ label: "Reads", name: "source", options: c.source, value: draft.form.source }),
        ],
        draft: draft.markdown,
        draftQuery: draft.query,
      });
    },
    exports: ({ draft }, { refused }) => ({
      links: [
        ["Incidents (JSON, paged)", "/admin/ops/incidents"],
        ["Open incidents (JSON)", "/admin/ops/incidents?status=open"],
        ["Incidents (CSV)", "/admin/ops/incidents/export"],
        ["Incidents (JSON twin of the CSV)", "/admin/ops/incidents/export.json"],
        ["The newest incident in detail (JSON)", "/admin/ops/incidents/detail.json"],
        // A refused draft has nothing to download: its links would only repeat the refusal.
        ...(refused || draft.markdown === null
          ? []
          : ([
              ["This draft (Markdown)", `/admin/ops/incidents/draft.md?${draft.query}`],
              ["This draft (plain text, 80 columns)", `/admin/ops/incidents/draft.txt?${draft.query}`],
              ["This draft (JSON)", `/admin/ops/incidents/draft.json?${draft.query}`],
            ] as const)),
        ["Public incidents (JSON)", "/api/public/system-status/incidents"],
      ],
    }),
  });
}
