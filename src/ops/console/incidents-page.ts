import { Elysia, t } from "elysia";
import { consolePage, pageDoc, when } from "../../auth/console-kit";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { compileHtml } from "../../http/html";
import { intQuery } from "../../http/params";
import { buildDraft } from "../incidents/draft";
import { draftMarkdown } from "../incidents/draft-render";
import { listIncidentsPage } from "../incidents/export";

// GET /admin/console/incidents: the status incidents, open ones first (each opens its own page), paginated, and
// the incident draft in Markdown in a read-only text area — select it and copy it into the postmortem or the chat;
// no JavaScript needed. The draft's window and incident are chosen with a GET form; the same draft downloads as
// draft.md. Read-only: incidents are opened and updated through /admin/status/incidents.

const PATH = "/admin/console/incidents";
const PAGE_SIZE = 20;

const PageQuery = t.Object({
  offset: intQuery({ minimum: 0, maximum: 100_000, defaultValue: 0, description: "resolved incidents to skip (pagination)" }),
  hours: intQuery({ minimum: 1, maximum: 720, defaultValue: 24, description: "the draft's window: the last N hours" }),
  index: intQuery({ minimum: 0, maximum: 99, defaultValue: 0, description: "which incident of the window the draft is about, 0 = the newest" }),
});

type Incident = { id: number; title: string; badge: string; state: string; started: string; ended: string; source: string; components: string };

interface PageData {
  generatedAt: string;
  open: Incident[];
  recent: Incident[];
  total: number;
  offset: number;
  next: number | null;
  prev: number | null;
  hours: number;
  index: number;
  draft: string;
  draftQuery: string;
  exports: Array<readonly [string, string]>;
}

const table = `<table class="data"><thead><tr><th>Incident</th><th>State</th><th>Started</th><th>Ended</th><th>Source</th><th>Components</th></tr></thead><tbody>
<% for (const i of rows) { %><tr id="incident-<%= i.id %>"><td data-label="Incident"><a href="/admin/ops/incidents/<%= i.id %>">#<%= i.id %> <%= i.title %></a></td><td data-label="State"><span class="badge <%= i.badge %>"><%= i.state %></span></td><td data-label="Started"><%= i.started %></td><td data-label="Ended"><%= i.ended %></td><td data-label="Source"><%= i.source %></td><td data-label="Components"><%= i.components %></td></tr>
<% } %></tbody></table>`;

const body = compileHtml<PageData>(
  "console-incidents",
  `<style>textarea.draft { width:100%; min-height:22em; font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; border:1px solid var(--line); border-radius:6px; padding:8px 10px; background:var(--bg); }</style>
<h1>Incidents</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. The status page's incidents, automatic and operator-made; open ones first.</p>
<section id="open" class="summary <%= it.open.length ? "attention" : "ready" %>"><p><strong id="open-count"><%= it.open.length %></strong> open.</p></section>
<% if (it.open.length) { const rows = it.open; %><div id="open-rows">${table}</div><% } %>
<section id="recent"><h2>Recent</h2>
<% if (it.recent.length === 0) { %><p class="muted" id="recent-none">None.</p><% } else { const rows = it.recent; %><div id="recent-rows">${table}</div>
<p class="muted"><%= it.total %> resolved in all.<% if (it.prev !== null) { %> <a id="newer" href="${PATH}?offset=<%= it.prev %>">Newer</a><% } %><% if (it.next !== null) { %> <a id="older" href="${PATH}?offset=<%= it.next %>">Older</a><% } %></p><% } %></section>
<section id="draft-section"><h2>Draft</h2>
<p class="muted">A first draft of the incident report in Markdown, from the incidents, errors and failed jobs of the window: select all in the box and copy it.</p>
<form method="get" action="${PATH}#draft-section" id="draft-form"><label>Last <input type="number" name="hours" min="1" max="720" value="<%= it.hours %>"> hours</label> <label>Incident <input type="number" name="index" min="0" max="99" value="<%= it.index %>"> (0 = newest)</label> <button type="submit" id="draft-apply">Draft</button></form>
<p><textarea class="draft" id="draft" readonly rows="22" aria-label="The incident draft in Markdown"><%= it.draft %></textarea></p>
<p><a id="draft-md" href="/admin/ops/incidents/draft.md?<%= it.draftQuery %>">Download draft.md</a> · <a href="/admin/ops/incidents/draft.txt?<%= it.draftQuery %>">as plain text</a> · <a href="/admin/ops/incidents/draft.json?<%= it.draftQuery %>">as JSON</a></p></section>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul></section>`,
);

const SEVERITY_BADGE: Record<string, string> = { warn: "warn", bad: "bad" };

export function incidentsPageRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:console-incidents" }).use(guards.operator.plugin).get(
    PATH,
    ({ operator, query }) => {
      const offset = query.offset ?? 0;
      const hours = query.hours ?? 24;
      const index = query.index ?? 0;
      const view = (i: ReturnType<typeof listIncidentsPage>["incidents"][number]): Incident => ({
        id: i.id,
        title: i.title,
        badge: i.status === "open" ? (SEVERITY_BADGE[i.current_severity ?? i.severity] ?? "warn") : "ok",
        state: i.status === "open" ? `open: ${i.current_severity ?? i.severity}` : "resolved",
        started: when(i.started_at)!,
        ended: when(i.ended_at) ?? "–",
        source: i.source,
        components: i.components.join(", ") || "–",
      });
      const open = listIncidentsPage(ctx, { status: "open", limit: 100 });
      const recent = listIncidentsPage(ctx, { status: "resolved", limit: PAGE_SIZE, offset });
      const draftQuery = new URLSearchParams({ hours: String(hours), index: String(index) }).toString();
      return consolePage(
        operator,
        "Incidents",
        PATH,
        body({
          generatedAt: when(ctx.clock.now().toISOString())!,
          open: open.incidents.map(view),
          recent: recent.incidents.map(view),
          total: recent.total,
          offset,
          next: recent.pagination.has_more ? offset + recent.count : null,
          prev: offset > 0 ? Math.max(0, offset - PAGE_SIZE) : null,
          hours,
          index,
          draft: draftMarkdown(buildDraft(ctx, { hours, index })),
          draftQuery,
          exports: [
            ["Incidents (JSON, paginated)", "/admin/ops/incidents"],
            ["Incidents (CSV)", "/admin/ops/incidents/export"],
            ["Incidents (JSON export)", "/admin/ops/incidents/export.json"],
            ["The newest incident in detail (JSON)", "/admin/ops/incidents/detail.json"],
            ["The draft (Markdown)", `/admin/ops/incidents/draft.md?${draftQuery}`],
            ["Public incidents (JSON)", "/api/public/system-status/incidents"],
          ],
        }),
      );
    },
    {
      operator: "page",
      query: PageQuery,
      detail: pageDoc("Incidents (HTML page): open and recent incidents linking to each one's page, and the incident draft in Markdown to copy", PATH),
    },
  );
}
