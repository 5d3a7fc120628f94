import { parseCalendarStrict, zonedInstantMs } from "../../clock";
import { Elysia, t } from "elysia";
import {
  backTo,
  consolePage,
  csrfField,
  formAction,
  formDoc,
  type Notice,
  notice,
  pageDoc,
  refusal,
  refusingPage,
  wantsHtml,
  when,
} from "../../auth/console-kit";
import { AppError } from "../../http/errors";
import type { Guards } from "../../auth/guards";
import type { OperatorRequest } from "../../auth/session-plugin";
import type { AppContext } from "../../context";
import { MAX_CURSOR_CHARS } from "../../http/pagination";
import { intPath, intQuery } from "../../http/params";
import { createSilence, expireSilence, MAX_SILENCE_DAYS } from "../alerts/silences";
import { firingAlerts } from "../alerts/views";
import { type AlertsQuery, alertsPageData, EMPTY_FORM, parseAlertsQuery, type SilenceFormValues } from "./alerts-data";
import { ALERTS_PATH as PATH, alertsBody } from "./alerts-view";
import { ignoredMetaQuery } from "../../http/envelope";

// GET /admin/console/alerts: what fires now (each alert links to its own page), the recent changes and the
// evaluations (paged like export.json), and the silences — who, why, until when — with a form to add one and a
// button to end one. The forms call the same verbs as POST /admin/ops/alerts-monitor/silences and
// …/silences/{id}/expire (createSilence, expireSilence: audited in the same transaction, actor = the operator).

const MAX_HOURS = MAX_SILENCE_DAYS * 24;
const str = (maxLength: number, description: string) => t.Optional(t.String({ maxLength, description }));

const PageQuery = t.Object({
  ...ignoredMetaQuery,
  done: str(16, "set by a form's redirect: silenced or ended"),
  silence: str(12, "set by a form's redirect: the silence's id"),
  matcher: str(200, "pre-fills the silence form (from a firing alert's Silence link)"),
  changes: str(9, "recent changes to skip (the Older link), 0 to 499"),
  // Typed and bounded like every numeric parameter (a value out of range is the 400 envelope naming it).
  days: intQuery({ minimum: 1, maximum: 90, description: "evaluations of the last N days, 1 to 90 (default 7)" }),
  source: str(16, "evaluations of one source: all, status, transparency, webhooks, digest, preflight"),
  status: str(8, "evaluations of one status: all, ok, warn, fail"),
  runs: str(9, "evaluations to skip (the Older link), as export.json's offset"),
  ended: str(MAX_CURSOR_CHARS, "the ended silences' cursor (the Older link)"),
});

const SilenceForm = t.Object(
  {
    ...csrfField,
    matcher: t.String({ maxLength: 200, description: "an alert key <source>:<name>, or a pattern with *" }),
    reason: t.String({ maxLength: 500, description: "why: shown to everyone on call" }),
    hours: str(4, `for this many hours, 1 to ${MAX_HOURS}`),
    until: str(40, `or until this time (UTC; 2026-04-02T09:00 as a datetime-local input sends it), at most ${MAX_SILENCE_DAYS} days ahead; wins over hours`),
  },
  { additionalProperties: false },
);
const EndForm = t.Object({ ...csrfField }, { additionalProperties: false });

const DONE: Record<string, string> = { silenced: "added", ended: "ended now" };
const doneOf = (done: string | undefined, id: string | undefined): string | null =>
  done && id && Object.hasOwn(DONE, done) && /^\d{1,12}$/.test(id) ? `Silence #${id} ${DONE[done]}.` : null;

const DEFAULT_QUERY: AlertsQuery = parseAlertsQuery({}).q;

async function render(ctx: AppContext, operator: OperatorRequest, q: AlertsQuery, n: Notice, form: SilenceFormValues, status = 200): Promise<Response> {
  const data = await alertsPageData(ctx, { q, notice: notice(n), form, csrf: operator.csrfToken, firing: await firingAlerts(ctx) });
  return consolePage(operator, "Alerts", PATH, alertsBody(data), status);
}

/** A datetime-local value (read as UTC) or an ISO time with a zone, as epoch ms; NaN when it is neither. */
function untilMs(raw: string): number {
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(raw)) return parseCalendarStrict(`${raw}Z`);
  return zonedInstantMs(raw);
}

/** When the silence ends: `until` if given (it wins), else now + hours; bounded as the verb bounds it. */
function endsAtOf(ctx: AppContext, hoursRaw: string, untilRaw: string): string {
  const now = ctx.clock.now().getTime();
  const max = now + MAX_SILENCE_DAYS * 86_400_000;
  if (untilRaw !== "") {
    const ms = untilMs(untilRaw);
    if (Number.isNaN(ms)) throw refusal(400, "Nothing was changed: Until must be a date and time in UTC, such as 2026-04-02T09:00.");
    if (ms <= now) throw refusal(400, `Nothing was changed: Until must be in the future (it is ${when(new Date(now).toISOString())} now).`);
    if (ms > max)
      throw refusal(400, `Nothing was changed: Until must be at most ${MAX_SILENCE_DAYS} days ahead (${when(new Date(max).toISOString())} at the latest).`);
    return new Date(ms).toISOString();
  }
  const hours = /^\d{1,4}$/.test(hoursRaw) ? Number(hoursRaw) : Number.NaN;
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_HOURS) {
    throw refusal(400, `Nothing was changed: Hours must be a whole number from 1 to ${MAX_HOURS} (or give Until instead).`);
  }
  return new Date(now + hours * 3_600_000).toISOString();
}

export function alertsPageRoutes(ctx: AppContext, guards: Guards) {
  const refuseWith =
    (operator: OperatorRequest, form: SilenceFormValues = EMPTY_FORM) =>
    (status: number, error: string) =>
      render(ctx, operator, DEFAULT_QUERY, { done: null, error }, form, status);
  return new Elysia({ name: "herald:console-alerts" })
    .use(guards.operator.plugin)
    .get(
      PATH,
      ({ operator, query, request }) => {
        const { q, error } = parseAlertsQuery({ ...query, days: query.days === undefined ? undefined : String(query.days) });
        // A browser gets the page with the message; a script (no text/html in Accept) the JSON envelope.
        if (error && !wantsHtml(request)) throw new AppError("invalid_query", error);
        const n = { done: doneOf(query.done, query.silence), error };
        return render(ctx, operator, q, n, { ...EMPTY_FORM, matcher: query.matcher ?? "" }, error ? 400 : 200);
      },
      {
        // days out of 1–90 is refused by the schema: for a browser, the page with defaults and the message too.
        operator: refusingPage((operator) => refuseWith(operator)),
        query: PageQuery,
        detail: {
          ...pageDoc(
            "Alerts (HTML page): firing now with links to each alert, recent changes, evaluations (paged), silences with add/end forms, exports",
            PATH,
          ),
          description: "A query value out of bounds shows the page with defaults and an error line (400, text/html).",
        },
      },
    )
    .post(
      `${PATH}/silences`,
      ({ operator, body, request }) => {
        const form: SilenceFormValues = { matcher: body.matcher, reason: body.reason, hours: body.hours ?? "", until: body.until ?? "" };
        return formAction(
          request,
          async () => {
            const matcher = body.matcher.trim();
            if (!/^[\x21-\x7e]+$/.test(matcher)) {
              throw refusal(
                400,
                "Nothing was changed: the alert key or pattern must be visible characters without spaces, such as digest:403_spike or webhooks:*.",
              );
            }
            const reason = body.reason.trim();
            if (reason === "") throw refusal(400, "Nothing was changed: say why (the reason is shown to everyone on call).");
            const endsAt = endsAtOf(ctx, (body.hours ?? "").trim(), (body.until ?? "").trim());
            const silence = await createSilence(ctx, operator, { matcher, reason, ends_at: endsAt });
            return backTo(PATH, { done: "silenced", silence: String(silence.id) });
          },
          refuseWith(operator, form),
        );
      },
      {
        operator: "form",
        body: SilenceForm,
        detail: formDoc(
          "Silence alerts from the alerts page (audited, as POST /admin/ops/alerts-monitor/silences)",
          "csrf_token, matcher, reason, hours or until",
          {
            400: "a bad matcher, no reason, hours out of range, until not in the next 30 days",
          },
        ),
      },
    )
    .post(
      `${PATH}/silences/:silence_id/end`,
      ({ operator, params, request }) =>
        formAction(
          request,
          async () => {
            const s = await expireSilence(ctx, operator, params.silence_id);
            return backTo(PATH, { done: "ended", silence: String(s.id) });
          },
          refuseWith(operator),
        ),
      {
        operator: "form",
        params: t.Object({ silence_id: intPath() }),
        body: EndForm,
        detail: formDoc("End a silence now from the alerts page (audited, as …/silences/{id}/expire)", "csrf_token", {
          404: "no such silence",
          409: "it already ended",
        }),
      },
    );
}
