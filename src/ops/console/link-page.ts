import { Elysia, t } from "elysia";
import { actorLabel } from "../../auth/actors";
import type { Guards } from "../../auth/guards";
import { operatorPage, operatorPageResponse } from "../../auth/operator-page";
import type { AppContext } from "../../context";
import { ErrorBody, ignoredMetaQuery } from "../../http/envelope";
import { AppError } from "../../http/errors";
import { compileHtml } from "../../http/html";
import { queryEvents, targetHealth, type EventRow, type TargetHealth } from "../link-inbox/exports";
import { filterQuery, LINK_EVENTS, SKIP_REASONS, STATUS_CODE_FAMILIES } from "../link-inbox/exports-model";
import { linkTargetHealth } from "../link-inbox/target-health";
import { notSignedInDoc } from "../../auth/console-kit";

// GET /admin/ops/link-inbox: the link inbox for a person — each chat target's delivery health, computed from the
// events, and the events themselves filtered by a GET form whose fields are the export's own parameters (so the
// export links repeat the page's query). A filter the export would refuse is 400 invalid_query (JSON), as on the export.

const PAGE_LIMIT = 200;

interface PageData {
  generatedAt: string;
  error: string | null;
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
<h1>Link inbox</h1>
<p class="lead">Operator notifications sent to the chat targets, and what became of each. As of <%= it.generatedAt %>; all times UTC.</p>
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
<% if (it.error !== null) { %><p class="error" id="filter-error"><%= it.error %></p><% } else { %>
<p class="muted" id="events-count"><%= it.total %> matching; newest <%= it.rows.length %> shown. Export: <a id="export-json" href="/admin/ops/link-inbox/events/export.json?<%= it.exportQuery %>">JSON</a> · <a id="export-csv" href="/admin/ops/link-inbox/events/export.csv?<%= it.exportQuery %>">CSV</a></p>
<table class="data" id="event-rows"><thead><tr><th>At</th><th>Event</th><th>Issue</th><th>Target</th><th>Attempt</th><th>Outcome</th><th>URL</th><th>Error</th></tr></thead><tbody>
<% for (const r of it.rows) { %><tr><td data-label="At"><%= r.at %></td><td data-label="Event"><code><%= r.event %></code></td><td data-label="Issue"><%= r.issue_id %></td><td data-label="Target"><%= r.target %></td><td data-label="Attempt"><%= r.attempt %></td><td data-label="Outcome"><span class="badge <%= r.status_code_family === "2xx" ? "ok" : r.skip_reason ? "warn" : "bad" %>"><%= r.skip_reason ? "skipped: " + r.skip_reason : (r.status_code_family ?? "?") + (r.status_code ? " " + r.status_code : "") %></span></td><td data-label="URL"><code><%= r.url ?? "" %></code></td><td data-label="Error" class="err"><%= r.error ?? "" %></td></tr>
<% } %></tbody></table><% } %></section>`,
);

const pageQuery = t.Object({ ...filterQuery, ...ignoredMetaQuery });

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
  return new Elysia({ name: "herald:ops-link-inbox-page" }).use(guards.operator.plugin).get(
    "/admin/ops/link-inbox",
    async ({ operator, query, request }) => {
      const url = new URL(request.url);
      const q: Record<string, string> = {};
      for (const [k, v] of url.searchParams) if (v !== "" && !(k in q)) q[k] = v;
      const exportParams = new URLSearchParams(Object.entries(q));
      // The form sends its empty fields too ("any"): an empty value is no filter.
      const given = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== "" && !(Array.isArray(v) && v.every((x) => x === ""))));
      // A filter the export would refuse (a date without a zone, at_to before at_from, …) re-renders this page with
      // the export's own message above the form, as a 400: the person fixes the field instead of reading raw JSON.
      let error: string | null = null;
      let rows: EventRow[] = [];
      let total = 0;
      try {
        const r = await queryEvents(ctx, { ...given, limit: Math.min(query.limit ?? PAGE_LIMIT, PAGE_LIMIT) }, false);
        rows = r.rows ?? [];
        total = r.total;
      } catch (e) {
        // A browser gets the page with the message; a script (no text/html in Accept) the JSON envelope.
        if (!(e instanceof AppError) || e.status !== 400 || !(request.headers.get("accept") ?? "").includes("text/html")) throw e;
        error = e.message;
      }
      const body = bodyHtml({
        generatedAt: `${ctx.clock.now().toISOString().slice(0, 19).replace("T", " ")} UTC`,
        error,
        q,
        events: LINK_EVENTS,
        families: STATUS_CODE_FAMILIES,
        reasons: SKIP_REASONS,
        targets: await targetsWithReasons(ctx),
        rows,
        total,
        exportQuery: exportParams.toString(),
      });
      return operatorPageResponse(
        operatorPage({ title: "Link inbox · Herald", current: "/admin/ops/link-inbox", who: actorLabel(operator.actor), csrfToken: operator.csrfToken, body }),
        error === null ? 200 : 400,
      );
    },
    {
      operator: "page",
      query: pageQuery,
      detail: {
        summary:
          "Link inbox (HTML page): chat targets' delivery health and the events, filtered by a GET form; without credentials a browser is sent to /admin/sign-in, a script gets 403",
        responses: {
          200: { description: "text/html", content: { "text/html": { schema: { type: "string" as const } } } },
          ...notSignedInDoc("/admin/ops/link-inbox"),
          400: {
            description:
              "A filter the export refuses: this page again (text/html) with the message above the form; a malformed parameter the schema refuses (limit=abc) is the JSON invalid_query envelope",
            content: { "text/html": { schema: { type: "string" as const } }, "application/json": { schema: ErrorBody } },
          },
        },
      },
    },
  );
}
