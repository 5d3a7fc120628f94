import { Elysia, t } from "elysia";
import { writeAudit } from "../auth/audit";
import { backTo, consolePage, csrfField, formAction, formDoc, refusal, type Notice, NO_NOTICE, notice, pageDoc, when } from "../auth/console-kit";
import type { Guards } from "../auth/guards";
import type { OperatorRequest } from "../auth/session-plugin";
import type { AppContext } from "../context";
import { compileHtml } from "../http/html";
import { intPath, intQuery } from "../http/params";
import { adminReplay, deadLettersForOperator } from "./deliveries";

// GET /admin/console/dead-letters: every partner's webhook deliveries that gave up (dead letters), newest first,
// filtered by partner and event type, each with a replay form that requires a reason. The replay is the operator
// replay of POST /admin/partners/webhook-events/{id}/replay (re-queued at once, attempts reset); the reason is kept
// with the replay (the delivery's replay history) and in the audit row.

const PATH = "/admin/console/dead-letters";
const PAGE_SIZE = 50;

const PageQuery = t.Object({
  partner: t.Optional(t.String({ maxLength: 64, description: "one partner's dead letters" })),
  event_type: t.Optional(t.String({ maxLength: 64, description: "one event type's dead letters" })),
  offset: intQuery({ minimum: 0, maximum: 100_000, defaultValue: 0, description: "dead letters to skip (pagination)" }),
  done: t.Optional(t.String({ maxLength: 12, description: "set by the replay form's redirect: the delivery id" })),
});
const ReplayForm = t.Object(
  { ...csrfField, reason: t.String({ maxLength: 500, description: "why it is replayed (required)" }) },
  { additionalProperties: false },
);

interface PageData {
  generatedAt: string;
  filter: { partner: string; event_type: string };
  rows: Array<{
    id: number;
    partner: string;
    mode: string;
    eventId: string;
    eventType: string;
    attempts: number;
    error: string;
    status: string;
    target: string;
    dead: string;
  }>;
  offset: number;
  next: number | null;
  prev: number | null;
  query: string;
  csrf: string | null;
  notice: ReturnType<typeof notice>;
}

const body = compileHtml<PageData>(
  "console-dead-letters",
  `<h1>Webhook dead letters</h1>
<p class="lead">As of <%= it.generatedAt %>; all times UTC. Deliveries to partners' webhooks that used up their retries. A replay queues one again at once, with its attempts reset; say why — the reason stays with the delivery and in the audit trail.</p>
<%= it.notice %>
<form method="get" action="${PATH}" id="filters" class="filters"><label>Partner <input name="partner" maxlength="64" value="<%= it.filter.partner %>"></label> <label>Event type <input name="event_type" maxlength="64" value="<%= it.filter.event_type %>"></label> <button type="submit" id="apply">Show</button></form>
<section id="letters" class="summary <%= it.rows.length ? "attention" : "ready" %>"><p id="dead-count"><%= it.rows.length ? it.rows.length + (it.next !== null ? "+" : "") + " dead letters" : "No dead letter." %></p></section>
<% if (it.rows.length) { %><table class="data" id="dead-rows"><thead><tr><th>Delivery</th><th>Partner</th><th>Event</th><th>Attempts</th><th>Last answer</th><th>Target</th><th>Dead since</th><th>Replay</th></tr></thead><tbody>
<% for (const r of it.rows) { %><tr id="delivery-<%= r.id %>"><td data-label="Delivery">#<%= r.id %></td><td data-label="Partner"><%= r.partner %> (<%= r.mode %>)</td><td data-label="Event"><code><%= r.eventType %></code> <code><%= r.eventId %></code></td><td data-label="Attempts"><%= r.attempts %></td><td data-label="Last answer" class="err"><%= r.status %> <%= r.error %></td><td data-label="Target"><code><%= r.target %></code></td><td data-label="Dead since"><%= r.dead %></td>
<td data-label="Replay"><form method="post" action="${PATH}/<%= r.id %>/replay"><% if (it.csrf !== null) { %><input type="hidden" name="csrf_token" value="<%= it.csrf %>"><% } %><input name="reason" maxlength="500" required placeholder="why" aria-label="Why replay delivery <%= r.id %>"> <button type="submit" id="replay-<%= r.id %>">Replay</button></form></td></tr>
<% } %></tbody></table>
<p class="muted"><% if (it.prev !== null) { %><a id="newer" href="${PATH}?<%= it.query %>&amp;offset=<%= it.prev %>">Newer</a> <% } %><% if (it.next !== null) { %><a id="older" href="${PATH}?<%= it.query %>&amp;offset=<%= it.next %>">Older</a><% } %></p><% } %>
<section id="exports"><h2>Exports</h2><ul class="exports"><li><a href="/api/public/system-status">Webhooks check on the status page (JSON)</a></li><li><a href="/admin/ops/readiness">Readiness (dead-letter growth)</a></li><li><a href="/admin/ops/alerts-monitor/firing.json">Alerts firing now (JSON)</a></li></ul></section>`,
);

function render(ctx: AppContext, operator: OperatorRequest, filter: PageData["filter"], offset: number, n: Notice, status = 200): Response {
  const page = deadLettersForOperator(
    ctx,
    { partner: filter.partner || undefined, event_type: filter.event_type || undefined },
    { limit: PAGE_SIZE, offset, after: null, cursor: null },
  );
  return consolePage(
    operator,
    "Webhook dead letters",
    PATH,
    body({
      generatedAt: when(ctx.clock.now().toISOString())!,
      filter,
      rows: page.items.map((d) => ({
        id: d.id,
        partner: d.partner,
        mode: d.mode,
        eventId: d.event_id,
        eventType: d.event_type,
        attempts: d.attempts,
        status: d.last_status_code === null ? "no answer" : `HTTP ${d.last_status_code}`,
        error: d.last_error ?? "",
        target: d.target_url,
        dead: when(d.updated_at)!,
      })),
      offset,
      next: page.pagination.has_more ? offset + page.items.length : null,
      prev: offset > 0 ? Math.max(0, offset - PAGE_SIZE) : null,
      query: new URLSearchParams(filter).toString(),
      csrf: operator.csrfToken,
      notice: notice(n),
    }),
    status,
  );
}

export function deadLettersPageRoutes(ctx: AppContext, guards: Guards) {
  const none = { partner: "", event_type: "" };
  const refuseWith = (operator: OperatorRequest) => (status: number, error: string) => render(ctx, operator, none, 0, { done: null, error }, status);
  return new Elysia({ name: "herald:console-dead-letters" })
    .use(guards.operator.plugin)
    .get(
      PATH,
      ({ operator, query }) =>
        render(ctx, operator, { partner: query.partner ?? "", event_type: query.event_type ?? "" }, query.offset ?? 0, {
          ...NO_NOTICE,
          done: query.done && /^\d{1,12}$/.test(query.done) ? `Delivery #${query.done} queued again.` : null,
        }),
      {
        operator: "page",
        query: PageQuery,
        detail: pageDoc("Webhook dead letters (HTML page): every partner's dead-lettered deliveries with a replay form that requires a reason", PATH, [
          "admin",
          "webhooks",
        ]),
      },
    )
    .post(
      `${PATH}/:delivery_id/replay`,
      ({ operator, params, body, request }) =>
        formAction(
          request,
          () => {
            const reason = body.reason.trim();
            if (reason === "") throw refusal(400, "Nothing was replayed: say why (the reason is kept with the delivery and in the audit trail).");
            const ref = String(params.delivery_id);
            const out = adminReplay(
              ctx,
              ref,
              (details) =>
                writeAudit(ctx.db.sqlite, {
                  at: ctx.clock.now().toISOString(),
                  actor: operator.actor,
                  action: "webhook_event.replay",
                  target: ref,
                  details,
                  requestId: operator.requestId,
                }),
              reason,
            );
            const result = out.results[0];
            if (!result?.replayed) throw refusal(409, `Nothing was replayed: delivery #${ref} is ${(result?.error ?? "not replayable").replaceAll("_", " ")}.`);
            ctx.dispatcher.nudge();
            return backTo(PATH, { done: ref });
          },
          refuseWith(operator),
        ),
      {
        operator: "form",
        params: t.Object({ delivery_id: intPath() }),
        body: ReplayForm,
        detail: formDoc(
          "Replay one dead-lettered delivery with a reason (audited, as POST /admin/partners/webhook-events/{id}/replay)",
          "csrf_token, reason",
          {
            400: "no reason",
            404: "no such delivery",
            409: "it is already queued again, or its webhook is deleted or disabled",
          },
          ["admin", "webhooks"],
        ),
      },
    );
}
