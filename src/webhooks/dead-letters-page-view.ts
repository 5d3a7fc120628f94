import { type Notice, notice, when } from "../auth/console-kit";
import { compileHtml, type SafeHtml } from "../http/html";
import type { DeadLetterFilter } from "./dead-letters-page-data";
import { FILTER_MAX, REASON_MAX } from "./dead-letters-page-data";

// The dead-letters page's HTML: the filter form (GET), the count, one row per dead letter with its replay form
// (a reason is required; the filter travels with the form so the answer comes back to the same view), the
// pages, and the exports. Every value is escaped by the template (src/http/html.ts).

export const PATH = "/admin/console/dead-letters";

export interface Row {
  id: number;
  partner: string;
  mode: string;
  eventId: string;
  eventType: string;
  attempts: number;
  /** The last attempt's error (it names the HTTP status), or the status alone. */
  answer: string;
  target: string;
  webhookId: number;
  dead: string;
}

interface PageData {
  generatedAt: string;
  maxAttempts: number;
  filter: DeadLetterFilter;
  filtered: boolean;
  suggestions: { partners: string[]; eventTypes: string[] };
  rows: Row[];
  total: number;
  from: number;
  to: number;
  newer: string | null;
  older: string | null;
  csrf: string | null;
  exports: Array<readonly [string, string]>;
  notice: SafeHtml;
}

const body = compileHtml<PageData>(
  "console-dead-letters",
  `<h1>Webhook dead letters</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. Deliveries to partners' webhooks that Herald stopped retrying, newest first: after their last attempt failed (WEBHOOK_MAX_ATTEMPTS is <%= it.maxAttempts %> now), or sooner when the receiver answered 410 Gone. The Attempts column says how many each had. A replay sends one again at once, its attempts reset; say why — the reason stays in the delivery's replay history and in the audit trail.</p>
<%= it.notice %>
<form method="get" action="${PATH}" id="filters"><p><label>Partner <input name="partner" maxlength="${FILTER_MAX}" list="partner-names" value="<%= it.filter.partner %>"></label> <label>Event type <input name="event_type" maxlength="${FILTER_MAX}" list="event-types" value="<%= it.filter.event_type %>"></label> <button type="submit" id="apply">Show</button><% if (it.filtered) { %> <a href="${PATH}" id="clear">Every dead letter</a><% } %></p>
<datalist id="partner-names"><% for (const p of it.suggestions.partners) { %><option value="<%= p %>"><% } %></datalist><datalist id="event-types"><% for (const e of it.suggestions.eventTypes) { %><option value="<%= e %>"><% } %></datalist></form>
<section id="letters" class="summary <%= it.total ? "attention" : "ready" %>"><p id="dead-count"><% if (it.total === 0) { %>None<%= it.filtered ? " match this filter" : ": no delivery was given up on" %>.<% } else { %><strong><%= it.total %></strong> <%= it.total === 1 ? "dead letter" : "dead letters" %><%= it.filtered ? " match this filter" : "" %><% if (it.total > it.rows.length) { %>; <%= it.rows.length ? it.from + "–" + it.to + " shown" : "none on this page" %><% } %>.<% } %></p></section>
<% if (it.rows.length) { %><table class="data" id="dead-rows"><thead><tr><th>Delivery</th><th>Partner</th><th>Event</th><th>Attempts</th><th>Last answer</th><th>Target</th><th>Dead since</th><th>Replay</th></tr></thead><tbody>
<% for (const r of it.rows) { %><tr id="delivery-<%= r.id %>"><td data-label="Delivery">#<%= r.id %></td><td data-label="Partner"><%= r.partner %> <span class="muted short">(<%= r.mode %>)</span></td><td data-label="Event"><code><%= r.eventType %></code><br><code class="muted"><%= r.eventId %></code></td><td data-label="Attempts"><%= r.attempts %></td><td data-label="Last answer" class="err"><%= r.answer %></td><td data-label="Target">webhook #<%= r.webhookId %> <code><%= r.target %></code></td><td data-label="Dead since"><%= r.dead %></td>
<td data-label="Replay"><form method="post" action="${PATH}/<%= r.id %>/replay"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><% if (it.filter.partner) { %><input type="hidden" name="partner" value="<%= it.filter.partner %>"><% } %><% if (it.filter.event_type) { %><input type="hidden" name="event_type" value="<%= it.filter.event_type %>"><% } %><label>Why <input name="reason" maxlength="${REASON_MAX}" required placeholder="receiver fixed, ticket…" aria-label="Why replay delivery <%= r.id %>"></label> <button type="submit" id="replay-<%= r.id %>">Replay</button></form></td></tr>
<% } %></tbody></table><% } %>
<% if (it.newer !== null || it.older !== null) { %><p id="pages"><% if (it.newer !== null) { %><a id="newer" href="<%= it.newer %>">← Newer</a> <% } %><% if (it.older !== null) { %><a id="older" href="<%= it.older %>">Older →</a><% } %></p><% } %>
<section id="exports"><h2>Exports</h2><ul class="exports"><% for (const [label, href] of it.exports) { %><li><a href="<%= href %>"><%= label %></a></li><% } %></ul>
<p class="muted">From a shell: <code>POST /admin/partners/webhook-events/{event_id}/replay</code> with the bearer token replays a delivery id or every delivery of an evt_ id (no reason field; the page's replays carry one).</p></section>`,
);

export interface ViewInput {
  generatedAt: string;
  maxAttempts: number;
  filter: DeadLetterFilter;
  suggestions: PageData["suggestions"];
  rows: Row[];
  total: number;
  offset: number;
  pageSize: number;
  hasMore: boolean;
  csrf: string | null;
  notice: Notice;
}

/** The page for one view: the filter, one page of rows from `offset`, links to the neighbouring pages. */
export function deadLettersBody(v: ViewInput): SafeHtml {
  const query = (extra: Record<string, string>) => {
    const q = new URLSearchParams();
    if (v.filter.partner) q.set("partner", v.filter.partner);
    if (v.filter.event_type) q.set("event_type", v.filter.event_type);
    for (const [k, val] of Object.entries(extra)) q.set(k, val);
    const s = q.toString();
    return s ? `?${s}` : "";
  };
  const at = (offset: number) => `${PATH}${query(offset > 0 ? { offset: String(offset) } : {})}`;
  return body({
    generatedAt: when(v.generatedAt)!,
    maxAttempts: v.maxAttempts,
    filter: v.filter,
    filtered: Boolean(v.filter.partner || v.filter.event_type),
    suggestions: v.suggestions,
    rows: v.rows,
    total: v.total,
    from: v.offset + 1,
    to: v.offset + v.rows.length,
    newer: v.offset > 0 ? at(Math.max(0, v.offset - v.pageSize)) : null,
    older: v.hasMore ? at(v.offset + v.rows.length) : null,
    csrf: v.csrf,
    exports: [
      ["These dead letters (JSON, paginated)", `${PATH}.json${query({})}`],
      ["These dead letters (CSV)", `${PATH}.csv${query({})}`],
      ["Dead-letter growth alert, if firing (JSON)", "/admin/ops/alerts-monitor/firing.json?source=webhooks"],
      ["Readiness: dead letters and their growth over 24 h", "/admin/ops/readiness"],
      ["Webhooks check of the public status (JSON)", "/api/public/system-status"],
    ],
    notice: notice(v.notice),
  });
}
