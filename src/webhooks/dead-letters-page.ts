import { Elysia, t } from "elysia";
import { backTo, consolePage, csrfField, formAction, formDoc, NO_NOTICE, type Notice, pageDoc, refusingPage, wantsHtml } from "../auth/console-kit";
import type { Guards } from "../auth/guards";
import type { OperatorRequest } from "../auth/session-plugin";
import type { AppContext } from "../context";
import { csvRecords, csvResponse } from "../http/csv";
import { Envelope, ErrorBody, includeMetaQuery, ignoredMetaQuery } from "../http/envelope";
import { AppError } from "../http/errors";
import { intQuery } from "../http/params";
import { OffsetQueryEcho, PaginationSchema } from "../http/pagination";
import {
  type DeadLetterFilter,
  deadLetterPage,
  EXPORT_COLUMNS,
  exportRows,
  FILTER_MAX,
  filterOrThrow,
  filterSuggestions,
  REASON_MAX,
  replayDeadLetterOrThrow,
} from "./dead-letters-page-data";
import { deadLettersBody, PATH } from "./dead-letters-page-view";

// GET /admin/console/dead-letters: every partner's webhook deliveries that Herald stopped retrying (dead letters),
// newest first, filtered by partner and event type, 50 a page, each with a replay form that requires a reason.
// The replay is the verb of POST /admin/partners/webhook-events/{event_id}/replay (re-queued at once, attempts
// reset, audited as webhook_event.replay); the page adds the reason — kept in the delivery's replay history and
// as `note` in the audit row's details — and replays only dead letters. Its exports (JSON, CSV) take the session.

const PAGE_SIZE = 50;
const CSV_MAX = 10_000;
const FILTER_BOUND = 200; // the schema's bound; the page itself refuses past FILTER_MAX with its message

const filterQuery = (bound: number) => ({
  partner: t.Optional(t.String({ maxLength: bound, description: `one partner's dead letters (exact name, at most ${FILTER_MAX} characters)` })),
  event_type: t.Optional(t.String({ maxLength: bound, description: "one event type's dead letters, e.g. webhook.test" })),
});
const PageQuery = t.Object({
  ...ignoredMetaQuery,
  ...filterQuery(FILTER_BOUND),
  offset: intQuery({ minimum: 0, maximum: 1_000_000, defaultValue: 0, description: "dead letters to skip (the page's Older/Newer links)" }),
  done: t.Optional(t.String({ maxLength: 80, description: "set by the replay form's redirect: replayed-<delivery id or evt_ id>" })),
});
const ReplayForm = t.Object(
  {
    ...csrfField,
    reason: t.String({ maxLength: REASON_MAX, description: "why it is replayed (required; kept with the replay and in the audit row)" }),
    partner: t.Optional(t.String({ maxLength: FILTER_MAX, description: "the page's filter, kept on the way back" })),
    event_type: t.Optional(t.String({ maxLength: FILTER_MAX, description: "the page's filter, kept on the way back" })),
  },
  { additionalProperties: false },
);
const ExportQuery = t.Object({
  ...filterQuery(FILTER_MAX),
  limit: intQuery({ minimum: 1, maximum: 200, defaultValue: 50, description: "dead letters per page" }),
  offset: intQuery({ minimum: 0, maximum: 1_000_000, defaultValue: 0, description: "dead letters to skip" }),
  ...includeMetaQuery,
});
const CsvQuery = t.Object({ ...filterQuery(FILTER_MAX), ...ignoredMetaQuery });
const nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()]);
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

const DONE = /^replayed-(\d{1,15}|evt_[A-Za-z0-9]{1,60})$/;
const doneSentence = (done: string | undefined): string | null => {
  const ref = done ? DONE.exec(done)?.[1] : undefined;
  if (ref === undefined) return null;
  const what = /^\d+$/.test(ref) ? `delivery #${ref}` : `the dead letters of event ${ref}`;
  return `Replayed ${what}: queued again now with its attempts reset; the reason is in its replay history and the audit trail.`;
};

async function render(ctx: AppContext, operator: OperatorRequest, filter: DeadLetterFilter, offset: number, n: Notice, status = 200): Promise<Response> {
  const page = await deadLetterPage(ctx, filter, offset, PAGE_SIZE);
  const body = deadLettersBody({
    generatedAt: ctx.clock.now().toISOString(),
    maxAttempts: ctx.config.webhooks.maxAttempts,
    filter,
    suggestions: await filterSuggestions(ctx),
    rows: page.items.map((d) => ({
      id: d.id,
      partner: d.partner,
      mode: d.mode,
      eventId: d.event_id,
      eventType: d.event_type,
      attempts: d.attempts,
      answer: d.last_error ?? (d.last_status_code === null ? "no answer recorded" : `HTTP ${d.last_status_code}`),
      target: d.target_url,
      webhookId: d.webhook_id,
      dead: `${d.updated_at.slice(0, 19).replace("T", " ")} UTC`,
    })),
    total: page.total,
    offset,
    pageSize: PAGE_SIZE,
    hasMore: page.hasMore,
    csrf: operator.csrfToken,
    notice: n,
  });
  return consolePage(operator, "Webhook dead letters", PATH, body, status);
}

/** The filter of a request, or the page with every dead letter and the filter's refusal (400). */
function filterOf(raw: { partner?: string; event_type?: string }): { filter: DeadLetterFilter; error: AppError | null } {
  try {
    return { filter: filterOrThrow(raw), error: null };
  } catch (err) {
    if (err instanceof AppError) return { filter: { partner: "", event_type: "" }, error: err };
    throw err;
  }
}

const exportFilter = (q: { partner?: string; event_type?: string }) => ({ partner: q.partner?.trim() ?? "", event_type: q.event_type?.trim() ?? "" });

export function deadLettersPageRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:console-dead-letters" })
    .use(guards.operator.plugin)
    .get(
      PATH,
      ({ operator, query, request }) => {
        const { filter, error } = filterOf(query);
        if (error) {
          // A browser gets the page again with the refusal above its form; a script the JSON envelope (pageDoc).
          if (!wantsHtml(request)) throw error;
          return render(ctx, operator, filter, 0, { done: null, error: error.message }, error.status);
        }
        return render(ctx, operator, filter, query.offset ?? 0, { ...NO_NOTICE, done: doneSentence(query.done) });
      },
      {
        // offset past its bound: for a browser, every dead letter from the first, with the message.
        operator: refusingPage((operator) => (status, error) => render(ctx, operator, { partner: "", event_type: "" }, 0, { done: null, error }, status)),
        query: PageQuery,
        detail: pageDoc(
          "Webhook dead letters (HTML page): every partner's dead-lettered deliveries, filtered by partner and event type, each with a replay form that requires a reason",
          PATH,
          ["admin", "webhooks"],
        ),
      },
    )
    .post(
      `${PATH}/:event_id/replay`,
      ({ operator, params, body, request }) => {
        const filter = { partner: body.partner?.trim() ?? "", event_type: body.event_type?.trim() ?? "" };
        return formAction(
          request,
          async () => {
            const ids = await replayDeadLetterOrThrow(ctx, operator, params.event_id, body.reason);
            ctx.dispatcher.nudge();
            const back: Record<string, string> = {};
            if (filter.partner) back.partner = filter.partner;
            if (filter.event_type) back.event_type = filter.event_type;
            return backTo(PATH, { ...back, done: `replayed-${ids.length === 1 && /^\d+$/.test(params.event_id) ? ids[0] : params.event_id}` });
          },
          (status, error) => render(ctx, operator, filter, 0, { done: null, error }, status),
        );
      },
      {
        operator: "form",
        params: t.Object({ event_id: t.String({ maxLength: 64, description: "the dead letter's delivery id (as on the page), or an evt_… event id" }) }),
        body: ReplayForm,
        detail: formDoc(
          "Replay a dead letter with a reason from the dead-letters page (audited, as POST /admin/partners/webhook-events/{event_id}/replay; the reason is kept with the replay and in the audit row)",
          "csrf_token, reason (required), partner and event_type (the page's filter)",
          {
            400: "no reason",
            404: "no such delivery or event",
            409: "not a dead letter (delivered, or still retrying), or its webhook deleted or disabled",
          },
          ["admin", "webhooks"],
        ),
      },
    )
    .get(
      `${PATH}.json`,
      async ({ query }) => {
        const limit = query.limit ?? 50;
        const offset = query.offset ?? 0;
        const f = exportFilter(query);
        const r = await exportRows(ctx, f, offset, limit);
        return {
          success: true as const,
          total: r.total,
          count: r.rows.length,
          query: { partner: f.partner || null, event_type: f.event_type || null, limit, offset, cursor: null },
          dead_letters: r.rows,
          pagination: { has_more: r.hasMore, next_offset: r.hasMore ? offset + r.rows.length : null, next_cursor: null },
        };
      },
      {
        operator: "api",
        query: ExportQuery,
        response: { 200: ExportAnswer, 400: ErrorBody, 403: ErrorBody },
        detail: {
          tags: ["admin", "webhooks"],
          summary: "Every partner's dead letters, newest first, filtered by partner and event type (the dead-letters page's rows)",
        },
      },
    )
    .get(
      `${PATH}.csv`,
      async ({ query }) => {
        const r = await exportRows(ctx, exportFilter(query), 0, CSV_MAX);
        const text = csvRecords([[...EXPORT_COLUMNS], ...r.rows.map((row) => EXPORT_COLUMNS.map((c) => row[c]))]);
        return csvResponse(text, "herald-dead-letters.csv");
      },
      {
        operator: "api",
        query: CsvQuery,
        detail: {
          tags: ["admin", "webhooks"],
          summary: `The dead letters as CSV (RFC 4180; the JSON export's columns), newest first, at most ${CSV_MAX} rows`,
          responses: {
            200: { description: "text/csv", content: { "text/csv": { schema: { type: "string" as const } } } },
            403: { description: "not an operator" },
          },
        },
      },
    );
}
