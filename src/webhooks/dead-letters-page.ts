import { t } from "elysia";
import { consoleRoute, form, refusal } from "../console/kit";
import { cells, code, dataTable, hrefWith, muted, setParts, when } from "../console/frame";
import type { Guards } from "../auth/guards";
import type { OperatorRequest } from "../auth/session-plugin";
import type { AppContext } from "../context";
import { csvDoc, csvResponse } from "../http/formats/csv";
import { Envelope, ignoredMetaQuery, includeMetaQuery, ok } from "../http/envelope";
import { AppError } from "../http/errors/errors";
import { compileHtml, type SafeHtml } from "../http/formats/html";
import { intQuery } from "../http/params";
import { OffsetQueryEcho, PaginationSchema } from "../http/pagination";
import { nullable, refuses } from "../http/routes/declare";
import { adminReplayIn, deadLettersForOperator, replayAudit } from "./deliveries";
import { deadLettersCsvTask, exportRowOf } from "./dead-letters-export";
import { deadLetterNamesTask, deliveriesOfEvent, deliveryStatusOf } from "./deliveries-store";
import { EVENT_TYPE_NAMES } from "./event-types";

// GET /admin/console/dead-letters: every partner's webhook deliveries that Herald stopped retrying (dead letters),
// newest first, filtered by partner and event type, 50 a page, each with a replay form that requires a reason.
// The replay is the verb of POST /admin/partners/webhook-events/{event_id}/replay (re-queued at once, attempts
// reset, audited as webhook_event.replay); the page adds the reason — kept in the delivery's replay history and
// as `note` in the audit row's details — and replays only dead letters. Its exports (JSON, CSV) take the session.

const PATH = "/admin/console/dead-letters";
const PAGE_SIZE = 50;
const CSV_MAX = 10_000;
const FILTER_BOUND = 200; // the schema's bound; the page itself refuses past FILTER_MAX with its message
const FILTER_MAX = 64;
const REASON_MAX = 500;
/** What a replay names: a delivery id (as on the page) or an evt_… event id. */
const REF = /^(\d{1,15}|evt_[A-Za-z0-9]{1,60})$/;

type DeadLetterFilter = { partner: string; event_type: string };

/** A filter as typed into the GET form, trimmed; a value past FILTER_MAX is a 400 the page shows above its form. */
function filterOrThrow(raw: { partner?: string; event_type?: string }): DeadLetterFilter {
  const partner = (raw.partner ?? "").trim();
  const event_type = (raw.event_type ?? "").trim();
  for (const [name, field, v] of [
    ["Partner", "partner", partner],
    ["Event type", "event_type", event_type],
  ] as const) {
    if (v.length > FILTER_MAX) {
      throw new AppError("invalid_query", `${name} is ${v.length} characters long; a filter is at most ${FILTER_MAX}. Showing every dead letter.`, {
        details: [{ field: `query.${field}`, problem: `is ${v.length} characters long; at most ${FILTER_MAX}` }],
      });
    }
  }
  return { partner, event_type };
}

const where = (f: DeadLetterFilter) => ({ partner: f.partner || undefined, event_type: f.event_type || undefined });

/**
 * The filter form's suggestions: partners that have dead letters, and every event type (the catalog's and any dead
 * letter's). Read in the read worker: both lists are DISTINCTs over every dead letter.
 */
async function filterSuggestions(ctx: AppContext): Promise<{ partners: string[]; eventTypes: string[] }> {
  const { partners, eventTypes } = await ctx.store.apart(deadLetterNamesTask, null);
  return { partners, eventTypes: [...new Set([...EVENT_TYPE_NAMES, ...eventTypes])].sort() };
}

const WHY_NOT: Record<string, string> = {
  webhook_deleted: "its webhook was deleted by the partner, so there is nowhere to send it",
  webhook_disabled: "its webhook is disabled; the partner enables it again first",
  already_pending: "it is already queued again",
};

/**
 * Replays the dead letters `ref` names — a delivery id, or an evt_… event id (its dead-lettered deliveries) — in one
 * transaction, each through adminReplay with its audit row, whose details carry the reason as `note` and
 * `via: "console"` (the JSON route has no reason field).
 */
async function replayDeadLetterOrThrow(ctx: AppContext, operator: OperatorRequest, ref: string, rawReason: string): Promise<number[]> {
  const reason = rawReason.trim();
  if (reason === "") throw refusal(400, "Nothing was replayed: say why (the reason is kept with the delivery and in the audit trail).");
  if (reason.length > REASON_MAX) throw refusal(400, `Nothing was replayed: the reason is at most ${REASON_MAX} characters.`);
  const what = /^\d+$/.test(ref) ? `delivery #${ref}` : `event ${ref}`;
  return ctx.store.tx(async (t) => {
    const rows = !REF.test(ref) ? [] : /^\d+$/.test(ref) ? [await deliveryStatusOf(t, Number(ref))].filter((r) => r !== null) : await deliveriesOfEvent(t, ref);
    if (rows.length === 0) throw refusal(404, `Nothing was replayed: there is no ${what}. It may have been pruned (dead letters are kept 90 days).`);
    const dead = rows.filter((r) => r.status === "dead_letter").map((r) => r.id);
    if (dead.length === 0) {
      const states = [...new Set(rows.map((r) => r.status.replace("_", " ")))].join(", ");
      throw refusal(409, `Nothing was replayed: ${what} is not a dead letter (it is ${states}); only dead letters are replayed here.`);
    }
    for (const id of dead) {
      const out = await adminReplayIn(t, ctx, String(id), replayAudit(ctx, operator, String(id), { via: "console" }), reason);
      const failed = out.results.find((r) => !r.replayed);
      // Throwing here rolls back every replay of this request (and its audit rows): all or nothing.
      if (failed) throw refusal(409, `Nothing was replayed: delivery #${id}: ${WHY_NOT[failed.error ?? ""] ?? failed.error}.`);
    }
    return dead;
  });
}

const filterQuery = (bound: number) => ({
  partner: t.Optional(t.String({ maxLength: bound, description: `one partner's dead letters (exact name, at most ${FILTER_MAX} characters)` })),
  event_type: t.Optional(t.String({ maxLength: bound, description: "one event type's dead letters, e.g. webhook.test" })),
});
const ExportQuery = t.Object({
  ...filterQuery(FILTER_MAX),
  limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 50, description: "dead letters per page" }),
  offset: intQuery({ minimum: 0, maximum: 1_000_000, defaultValue: 0, description: "dead letters to skip" }),
  ...includeMetaQuery,
});
const CsvQuery = t.Object({ ...filterQuery(FILTER_MAX), ...ignoredMetaQuery });
const ExportAnswer = Envelope({
  total: t.Integer({ description: "dead letters matching the filter" }),
  count: t.Integer(),
  query: OffsetQueryEcho({ partner: nullable(t.String()), event_type: nullable(t.String()) }),
  dead_letters: t.Array(
    t.Object({
      delivery_id: t.Integer(),
      partner: t.String(),
      mode: t.String(),
      event_id: t.String(),
      event_type: t.String(),
      webhook_id: t.Integer(),
      attempts: t.Integer(),
      last_status_code: nullable(t.Integer()),
      last_error: nullable(t.String()),
      reason_tag: nullable(t.String()),
      target_url: t.String(),
      created_at: t.String(),
      dead_since: t.String({ description: "when it was dead-lettered (its last change)" }),
    }),
  ),
  pagination: PaginationSchema,
});

const body = compileHtml<{
  filter: DeadLetterFilter;
  filtered: boolean;
  suggestions: { partners: string[]; eventTypes: string[] };
  total: number;
  offset: number;
  shown: number;
  table: SafeHtml;
}>(
  "console-dead-letters",
  `<form method="get" action="${PATH}" id="filters" class="filters"><label>Partner <input name="partner" maxlength="${FILTER_MAX}" list="partner-names" value="<%= it.filter.partner %>"></label> <label>Event type <input name="event_type" maxlength="${FILTER_MAX}" list="event-types" value="<%= it.filter.event_type %>"></label> <button type="submit" id="apply">Show</button><% if (it.filtered) { %> <a href="${PATH}" id="clear">Every dead letter</a><% } %>
<datalist id="partner-names"><% for (const p of it.suggestions.partners) { %><option value="<%= p %>"><% } %></datalist><datalist id="event-types"><% for (const e of it.suggestions.eventTypes) { %><option value="<%= e %>"><% } %></datalist></form>
<section id="letters" class="summary <%= it.total ? "attention" : "ready" %>"><p id="dead-count"><% if (it.total === 0) { %>None<%= it.filtered ? " match this filter" : ": no delivery was given up on" %>.<% } else { %><strong><%= it.total %></strong> <%= it.total === 1 ? "dead letter" : "dead letters" %><%= it.filtered ? " match this filter" : "" %><% if (it.total > it.shown) { %>; <%= it.shown ? (it.offset + 1) + "–" + (it.offset + it.shown) + " shown" : "none on this page" %><% } %>.<% } %></p></section>
<%= it.table %>`,
);

const replayForm = compileHtml<{ id: number; csrf: SafeHtml; filter: DeadLetterFilter }>(
  "console-dead-letter-replay",
  `<form method="post" action="${PATH}/<%= it.id %>/replay"><%= it.csrf %><% if (it.filter.partner) { %><input type="hidden" name="partner" value="<%= it.filter.partner %>"><% } %><% if (it.filter.event_type) { %><input type="hidden" name="event_type" value="<%= it.filter.event_type %>"><% } %><label>Why <input name="reason" maxlength="${REASON_MAX}" required placeholder="receiver fixed, ticket…" aria-label="Why replay delivery <%= it.id %>"></label> <button type="submit" id="replay-<%= it.id %>">Replay</button></form>`,
);
const eventCell = compileHtml<{ type: string; id: string }>(
  "console-dead-letter-event",
  `<code><%= it.type %></code><br><code class="muted"><%= it.id %></code>`,
);

export function deadLettersPageRoutes(ctx: AppContext, guards: Guards) {
  return consoleRoute(ctx, guards, {
    path: PATH,
    title: "Webhook dead letters",
    tags: ["admin", "webhooks"],
    lead: `Deliveries to partners' webhooks that Herald stopped retrying, newest first: after their last attempt failed (WEBHOOK_MAX_ATTEMPTS is ${ctx.config.webhooks.maxAttempts} now), or sooner when the receiver answered 410 Gone. The Attempts column says how many each had. A replay sends one again at once, its attempts reset; say why — the reason stays in the delivery's replay history and in the audit trail.`,
    summary:
      "Webhook dead letters (HTML page): every partner's dead-lettered deliveries, filtered by partner and event type, each with a replay form that requires a reason",
    query: {
      ...filterQuery(FILTER_BOUND),
      offset: intQuery({ minimum: 0, maximum: 1_000_000, defaultValue: 0, description: "dead letters to skip (the page's Older/Newer links)" }),
    },
    done: {
      field: "ref",
      pattern: REF,
      says: {
        replayed: (ref) =>
          `Replayed ${/^\d+$/.test(ref) ? `delivery #${ref}` : `the dead letters of event ${ref}`}: queued again now with its attempts reset; the reason is in its replay history and the audit trail.`,
      },
    },
    // A filter past FILTER_MAX throws: a browser gets every dead letter with the refusal, a script the envelope.
    load: async (q) => {
      const filter = filterOrThrow(q);
      const offset = q.offset ?? 0;
      return { filter, offset, page: await deadLettersForOperator(ctx, where(filter), PAGE_SIZE, offset), suggestions: await filterSuggestions(ctx) };
    },
    view: ({ filter, offset, page, suggestions }, { csrf }) =>
      body({
        filter,
        filtered: Boolean(filter.partner || filter.event_type),
        suggestions,
        total: page.total,
        offset,
        shown: page.items.length,
        table: dataTable({
          id: "dead-rows",
          rows: page.items,
          rowId: (d) => `delivery-${d.id}`,
          columns: {
            Delivery: (d) => `#${d.id}`,
            Partner: (d) => cells(d.partner, muted(`(${d.mode})`)),
            Event: (d) => eventCell({ type: d.event_type, id: d.event_id }),
            Attempts: (d) => d.attempts,
            "Last answer": { class: "err", cell: (d) => d.last_error ?? (d.last_status_code === null ? "no answer recorded" : `HTTP ${d.last_status_code}`) },
            Target: (d) => cells(`webhook #${d.webhook_id}`, code(d.target_url)),
            "Dead since": (d) => when(d.updated_at),
            Replay: (d) => replayForm({ id: d.id, csrf, filter }),
          },
          pages: { id: "pages", offset, pageSize: PAGE_SIZE, hasMore: page.pagination.has_more, href: (o) => hrefWith(PATH, { ...filter, offset: o }) },
        }),
      }),
    exports: ({ filter }) => ({
      links: [
        ["These dead letters (JSON, paginated)", hrefWith(`${PATH}.json`, filter)],
        ["These dead letters (CSV)", hrefWith(`${PATH}.csv`, filter)],
        ["Dead-letter growth alert, if firing (JSON)", "/admin/ops/alerts-monitor/firing.json?source=webhooks"],
        ["Readiness: dead letters and their growth over 24 h", "/admin/ops/readiness"],
        ["Webhooks check of the public status (JSON)", "/api/public/system-status"],
      ],
      note: "From a shell: POST /admin/partners/webhook-events/{event_id}/replay with the bearer token replays a delivery id or every delivery of an evt_ id (no reason field; the page's replays carry one).",
    }),
    forms: [
      form({
        path: "/:event_id/replay",
        params: { event_id: t.String({ maxLength: 64, description: "the dead letter's delivery id (as on the page), or an evt_… event id" }) },
        body: {
          reason: t.String({ maxLength: REASON_MAX, description: "why it is replayed (required; kept with the replay and in the audit row)" }),
          partner: t.Optional(t.String({ maxLength: FILTER_MAX, description: "the page's filter, kept on the way back" })),
          event_type: t.Optional(t.String({ maxLength: FILTER_MAX, description: "the page's filter, kept on the way back" })),
        },
        summary:
          "Replay a dead letter with a reason from the dead-letters page (audited, as POST /admin/partners/webhook-events/{event_id}/replay; the reason is kept with the replay and in the audit row)",
        refusals: {
          400: "no reason",
          404: "no such delivery or event",
          409: "not a dead letter (delivered, or still retrying), or its webhook deleted or disabled",
        },
        keep: (b) => filterOrThrow(b),
        run: async ({ operator, params, body: b }) => {
          const ids = await replayDeadLetterOrThrow(ctx, operator, params.event_id, b.reason);
          ctx.dispatcher.nudge();
          return { ...setParts(filterOrThrow(b)), done: "replayed", ref: ids.length === 1 && /^\d+$/.test(params.event_id) ? String(ids[0]) : params.event_id };
        },
      }),
    ],
  })
    .get(
      `${PATH}.json`,
      async ({ query }) => {
        const f = filterOrThrow(query);
        const p = await deadLettersForOperator(ctx, where(f), query.limit ?? 50, query.offset ?? 0);
        const echo = { partner: f.partner || null, event_type: f.event_type || null, ...p.query };
        return ok({ total: p.total, count: p.count, query: echo, dead_letters: p.rows.map(exportRowOf), pagination: p.pagination });
      },
      {
        operator: "api",
        query: ExportQuery,
        response: { 200: ExportAnswer, ...refuses(400, 403) },
        detail: {
          tags: ["admin", "webhooks"],
          summary: "Every partner's dead letters, newest first, filtered by partner and event type (the dead-letters page's rows)",
        },
      },
    )
    .get(
      `${PATH}.csv`,
      async ({ query }) => {
        // Read and written in the read worker: the CSV's 10,000 rows and their text would hold the event loop.
        const csv = await ctx.store.apart(deadLettersCsvTask, { filter: where(filterOrThrow(query)), limit: CSV_MAX });
        return csvResponse(csv, "herald-dead-letters.csv");
      },
      {
        operator: "api",
        query: CsvQuery,
        detail: {
          tags: ["admin", "webhooks"],
          ...csvDoc(`The dead letters as CSV (RFC 4180; the JSON export's columns), newest first, at most ${CSV_MAX} rows`, "text/csv", {
            403: { description: "not an operator" },
          }),
        },
      },
    );
}
