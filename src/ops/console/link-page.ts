import { consoleRoute } from "../../auth/console-kit";
import type { Guards } from "../../auth/guards";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { compileHtml } from "../../http/html";
import { queryEvents, targetHealth, type EventRow, type TargetHealth } from "../link-inbox/exports";
import { filterQuery, LINK_EVENTS, SKIP_REASONS, STATUS_CODE_FAMILIES } from "../link-inbox/exports-model";
import { linkTargetHealth } from "../link-inbox/target-health";

// GET /admin/ops/link-inbox: the link inbox for a person — each chat target's delivery health, computed from the
// events, and the events themselves filtered by a GET form whose fields are the export's own parameters (so the
// export links repeat the page's query). A filter the export would refuse is the page with the export's message (400).

const PAGE_LIMIT = 200;

interface PageData {
  refused: boolean;
  q: Record<string, string>;
  events: readonly string[];
  families: readonly string[];
  reasons: readonly string[];
  targets: Array<TargetHealth & { health: string; badge: string; reason: string | null }>;
  rows: EventRow[];
  total: number;
  exportQuery: string;
}

const bodyHtml = compileHtml<PageData>(
  "link-inbox-page",
  `<style>form.filters { display:flex; flex-wrap:wrap; gap:8px 14px; align-items:flex-end; margin:0 0 12px; } form.filters label { font-size:13px; color:var(--muted); display:flex; flex-direction:column; max-width:100%; } form.filters input, form.filters select { font:inherit; padding:4px 6px; border:1px solid var(--line); border-radius:6px; max-width:100%; }</style>
<section id="targets"><h2>Targets</h2>
<% if (it.targets.length === 0) { %><p class="muted" id="targets-none">No target configured and no event recorded yet.</p><% } else { %><table class="data"><thead><tr><th>Target</th><th>Health</th><th>Why</th><th>Attempts</th><th>2xx</th><th>Failed</th><th>Skipped</th><th>Failing streak</th><th>Last success</th><th>Last failure</th></tr></thead><tbody>
<% for (const x of it.targets) { %><tr class="target"><td data-label="Target"><code><%= x.target %></code></td><td data-label="Health"><span class="badge <%= x.badge %>"><%= x.health %></span></td><td data-label="Why" class="<%= x.badge === "bad" ? "err" : "muted" %>"><%= x.reason ?? "" %></td><td data-label="Attempts"><%= x.attempts %></td><td data-label="2xx"><%= x.ok %></td><td data-label="Failed"><%= x.failed %></td><td data-label="Skipped"><%= x.skipped %></td><td data-label="Failing streak"><%= x.streak %></td><td data-label="Last success"><%= x.last_success ?? "never" %></td><td data-label="Last failure"><%= x.last_failure ?? "–" %></td></tr>
<% } %></tbody></table><% } %></section>

<section id="events"><h2>Events</h2>
<form method="get" action="/admin/ops/link-inbox" id="filters" class="filters">
<label>Event <select name="event"><option value="">any</option><% for (const e of it.events) { %><option<%= it.q.event === e ? " selected" : "" %>><%= e %></option><% } %></select></label>
<label>Outcome <select name="status_code_family"><option value="">any</option><% for (const e of it.families) { %><option<%= it.q.status_code_family === e ? " selected" : "" %>><%= e %></option><% } %></select></label>
<label>Skip <select name="skip_reason"><option value="">any</option><% for (const e of it.reasons) { %><option<%= it.q.skip_reason === e ? " selected" : "" %>><%= e %></option><% } %></select></label>
<label>Issue <input name="issue_id" value="<%= it.q.issue_id ?? "" %>" size="16"></label>
<label>URL contains <input name="url_contains" value="<%= it.q.url_contains ?? "" %>" size="16"></label>
<label>From <input name="at_from" value="<%= it.q.at_from ?? "" %>" placeholder="2026-04-01T00:00:00Z" size="22"></label>
<label>To <input name="at_to" value="<%= it.q.at_to ?? "" %>" size="22"></label>
<label>Window <select name="window_preset"><option value="">none</option><option<%= it.q.window_preset === "last_digest_warn" ? " selected" : "" %>>last_digest_warn</option><option<%= it.q.window_preset === "last_outage" ? " selected" : "" %>>last_outage</option></select></label>
<button type="submit" id="apply">Apply</button>
</form>
<% if (!it.refused) { %>
<p class="muted" id="events-count"><%= it.total %> matching; newest <%= it.rows.length %> shown. Export: <a id="export-json" href="/admin/ops/link-inbox/events/export.json?<%= it.exportQuery %>">JSON</a> · <a id="export-csv" href="/admin/ops/link-inbox/events/export.csv?<%= it.exportQuery %>">CSV</a></p>
<table class="data" id="event-rows"><thead><tr><th>At</th><th>Event</th><th>Issue</th><th>Target</th><th>Attempt</th><th>Outcome</th><th>URL</th><th>Error</th></tr></thead><tbody>
<% for (const r of it.rows) { %><tr><td data-label="At"><%= r.at %></td><td data-label="Event"><code><%= r.event %></code></td><td data-label="Issue"><%= r.issue_id %></td><td data-label="Target"><%= r.target %></td><td data-label="Attempt"><%= r.attempt %></td><td data-label="Outcome"><span class="badge <%= r.status_code_family === "2xx" ? "ok" : r.skip_reason ? "warn" : "bad" %>"><%= r.skip_reason ? "skipped: " + r.skip_reason : (r.status_code_family ?? "?") + (r.status_code ? " " + r.status_code : "") %></span></td><td data-label="URL"><code><%= r.url ?? "" %></code></td><td data-label="Error" class="err"><%= r.error ?? "" %></td></tr>
<% } %></tbody></table><% } %></section>`,
);

/**
 * The targets table: every target seen in the events plus every configured one (a refused target may have no
 * event yet), each with its health in a word and WHY — the target policy's refusal, the newest failure — where
 * "no success" alone left the operator guessing.
 */
async function targetsWithReasons(ctx: AppContext): Promise<PageData["targets"]> {
  const seen = await targetHealth(ctx);
  const configured = await linkTargetHealth(ctx);
  const rows: TargetHealth[] = [
    ...seen,
    ...configured
      .filter((c) => !seen.some((s) => s.target === c.target))
      .map((c) => ({ target: c.target, attempts: 0, ok: 0, failed: 0, skipped: 0, streak: 0, last_success: null, last_failure: null })),
  ];
  return rows.map((x) => {
    const c = configured.find((h) => h.target === x.target);
    const health = c?.policy_problem ? "refused" : c?.dead && x.streak > 0 ? "dead" : x.streak > 0 ? "failing" : x.ok > 0 ? "ok" : "no success";
    const badge = health === "ok" ? "ok" : health === "no success" ? "warn" : "bad";
    const reason = x.target === "" ? null : !c ? "not in LINK_INBOX_WEBHOOK_URLS any more" : (c.reason ?? (x.ok > 0 ? null : "no message sent to it yet"));
    return { ...x, health, badge, reason };
  });
}

export function linkInboxPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: "/admin/ops/link-inbox",
    title: "Link inbox",
    lead: "Operator notifications sent to the chat targets, and what became of each.",
    summary: "Link inbox (HTML page): chat targets' delivery health and the events, filtered by a GET form",
    query: filterQuery,
    async load(query, call) {
      // The form sends its empty fields too ("any"): an empty value is no filter; the first of a repeated one is shown.
      const given = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== "" && !(Array.isArray(v) && v.every((x) => x === ""))));
      const q: Record<string, string> = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, String(Array.isArray(v) ? v[0] : v)]));
      let events = { rows: [] as EventRow[], total: 0 };
      try {
        const r = await queryEvents(ctx, { ...given, limit: Math.min(query.limit ?? PAGE_LIMIT, PAGE_LIMIT) }, false);
        events = { rows: r.rows ?? [], total: r.total };
      } catch (e) {
        // A filter the export would refuse (a date without a zone, at_to before at_from, …): the page with the
        // export's own message, a 400; the person fixes the field instead of reading raw JSON.
        if (!(e instanceof AppError) || e.status !== 400) throw e;
        call.refuse(e);
      }
      return { q, ...events, targets: await targetsWithReasons(ctx) };
    },
    view: ({ q, rows, total, targets }, { refused }) =>
      bodyHtml({
        refused,
        q,
        events: LINK_EVENTS,
        families: STATUS_CODE_FAMILIES,
        reasons: SKIP_REASONS,
        targets,
        rows,
        total,
        exportQuery: new URLSearchParams(Object.entries(q)).toString(),
      }),
  });
}
