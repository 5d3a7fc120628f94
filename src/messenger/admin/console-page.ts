import { Elysia, t } from "elysia";
import { actorLabel } from "../../auth/actors";
import type { Guards } from "../../auth/guards";
import { operatorPage, operatorPageResponse } from "../../auth/operator-page";
import type { OperatorRequest } from "../../auth/session-plugin";
import { redirect } from "../../auth/session-plugin";
import { refusal, refusingPage, wantsHtml, notSignedInDoc } from "../../auth/console-kit";
import type { AppContext } from "../../context";
import { ErrorBody, ignoredMetaQuery } from "../../http/envelope";
import { AppError } from "../../http/errors";
import type { SafeHtml } from "../../http/html";
import { formRequestBody } from "../../http/body/form-body";
import { intQuery } from "../../http/params";
import { overviewChart } from "./console-page-chart";
import { consoleData, exportLinks, PAGE_DEFAULT_DAYS, PAGE_MAX_DAYS, PAGE_PATH, pageDays, when } from "./console-page-data";
import { consoleBody, notConfiguredBody } from "./console-page-html";
import { setMissionActive } from "./missions-admin";

// GET /admin/console/messenger: the messenger's operator page (docs/operations.md, "Messenger page"). It is mounted
// in games-config-routes.ts BEFORE that plugin's bot-token hook, so without MESSENGER_BOT_TOKEN it still answers,
// saying so in words instead of the routes' JSON 503. The one form switches a mission on or off through the
// missions routes' own verb (setMissionActive: audited, revision-checked), the same as
// POST /api/messenger/admin/missions/{key}/activate|deactivate with X-Expected-Revision.

const MISSION_KEY = /^[a-z0-9_-]{1,64}$/;
const DONE = { activated: "activated", deactivated: "deactivated", unchanged: "already in that state; nothing changed" } as const;

const PageQuery = t.Object({
  ...ignoredMetaQuery,
  // Out of range or not a whole number is the house's 400 invalid_query naming the parameter (src/http/params.ts),
  // shown on the page to a browser; the page's own form cannot send one (its number field has the same bounds).
  days: intQuery({ minimum: 1, maximum: PAGE_MAX_DAYS, defaultValue: PAGE_DEFAULT_DAYS, description: "the last N UTC days, today included" }),
  done: t.Optional(t.String({ maxLength: 16, description: "set by the mission form's redirect: activated, deactivated or unchanged" })),
  mission: t.Optional(t.String({ maxLength: 64, description: "set by the mission form's redirect: the mission it changed" })),
});

const MissionStateForm = t.Object(
  {
    // Optional in the schema so that a missing token is the CSRF refusal (403), not a malformed form (400).
    csrf_token: t.Optional(t.String({ maxLength: 128, description: "The session's CSRF token, printed into the form" })),
    active: t.String({ maxLength: 1, description: "1 to activate, 0 to deactivate" }),
    revision: t.Optional(t.String({ maxLength: 20, description: "The revision the page showed; a newer one is 409 (as X-Expected-Revision)" })),
    days: t.Optional(t.String({ maxLength: 8, description: "The page's day range, kept on the way back" })),
  },
  { additionalProperties: false },
);

const htmlDoc = { description: "text/html", content: { "text/html": { schema: { type: "string" as const } } } };

async function render(ctx: AppContext, operator: OperatorRequest, days: number, notice: { error?: string | null; done?: string | null } = {}, status = 200) {
  const error = notice.error ?? null;
  let body: SafeHtml;
  if (ctx.config.messenger.botToken) {
    const d = await consoleData(ctx, days);
    const chart = overviewChart(d.series, d.from, d.to);
    body = consoleBody(d, { error, done: notice.done ?? null, csrfToken: operator.csrfToken, maxDays: PAGE_MAX_DAYS, chart, exports: exportLinks(d.days) });
  } else body = notConfiguredBody({ generatedAt: when(ctx.clock.now().toISOString())!, error });
  const page = operatorPage({ title: "Messenger · Herald", current: PAGE_PATH, who: actorLabel(operator.actor), csrfToken: operator.csrfToken, body });
  return operatorPageResponse(page, status);
}

/** The redirect's `done`/`mission` as a sentence, or null: only our own words and a well-formed key are shown. */
function doneText(done: string | undefined, mission: string | undefined): string | null {
  if (!done || !mission || !Object.hasOwn(DONE, done) || !MISSION_KEY.test(mission)) return null;
  return `Mission ${mission} ${DONE[done as keyof typeof DONE]}.`;
}

export function messengerConsolePageRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:console-messenger" })
    .use(guards.operator.plugin)
    .get(PAGE_PATH, ({ operator, query }) => render(ctx, operator, query.days ?? PAGE_DEFAULT_DAYS, { done: doneText(query.done, query.mission) }), {
      // days out of range: the page over the default days with the message (a script: the JSON envelope).
      operator: refusingPage((operator) => (status, error) => render(ctx, operator, PAGE_DEFAULT_DAYS, { error }, status)),
      query: PageQuery,
      detail: {
        tags: ["messenger"],
        summary:
          "Messenger (HTML page): plays, players and credits per day (inline SVG chart and table), totals per game, running and scheduled campaigns, missions, links to every messenger admin export; says so when the bot is not configured",
        responses: {
          200: htmlDoc,
          ...notSignedInDoc(PAGE_PATH),
          400: {
            description: `invalid_query: days is not a whole number 1–${PAGE_MAX_DAYS}: the page over the default days with the message (text/html) for a browser, the JSON envelope for a script`,
            content: { ...htmlDoc.content, "application/json": { schema: ErrorBody } },
          },
        },
      },
    })
    .post(
      `${PAGE_PATH}/missions/:mission_key/state`,
      async ({ operator, params, body, request }) => {
        const days = pageDays(body.days);
        // A browser gets the page with the error; a script (no text/html in Accept) the JSON envelope.
        const refuse = (status: number, error: string) => {
          if (!wantsHtml(request)) throw status === 503 ? new AppError("messenger_not_configured", error) : refusal(status as 400 | 404 | 409, error);
          return render(ctx, operator, days, { error }, status);
        };
        if (!ctx.config.messenger.botToken) return refuse(503, "Nothing was changed: the Telegram bot is not configured (MESSENGER_BOT_TOKEN is unset).");
        if (!MISSION_KEY.test(params.mission_key)) return refuse(400, "That is not a mission key (1–64 of a-z 0-9 _ -); nothing was changed.");
        if (body.active !== "1" && body.active !== "0") return refuse(400, "The form's active field must be 1 or 0; reload the page and use its buttons.");
        const revision = body.revision === undefined || body.revision === "" ? null : body.revision;
        if (revision !== null && !/^[1-9][0-9]{0,15}$/.test(revision))
          return refuse(400, "The form's revision must be a positive whole number; reload the page.");
        try {
          const active = body.active === "1";
          const result = await setMissionActive(
            ctx,
            { actor: operator.actor, requestId: operator.requestId },
            params.mission_key,
            active,
            revision === null ? null : Number(revision),
          );
          const done = result.changed ? (active ? "activated" : "deactivated") : "unchanged";
          return redirect(`${PAGE_PATH}?days=${days}&done=${done}&mission=${encodeURIComponent(params.mission_key)}`);
        } catch (err) {
          if (err instanceof AppError && err.status < 500 && wantsHtml(request)) return refuse(err.status, `Nothing was changed: ${err.message}`);
          throw err;
        }
      },
      {
        operator: "form",
        params: t.Object({ mission_key: t.String({ minLength: 1, maxLength: 64, description: "The mission's key" }) }),
        body: MissionStateForm,
        detail: {
          tags: ["messenger"],
          summary: "Activate or deactivate a mission from the messenger page (form post; audited as the JSON activate/deactivate); 303 back to the page",
          requestBody: formRequestBody("Form fields csrf_token, active (1 or 0), revision and days"),
          responses: {
            303: { description: `Done (Location: ${PAGE_PATH}?days=…&done=activated|deactivated|unchanged&mission=…), or not signed in (to /admin/sign-in)` },
            400: { ...htmlDoc, description: "text/html: the page with the error (a malformed field)" },
            403: { description: "Missing or wrong CSRF token" },
            404: { ...htmlDoc, description: "text/html: the page with the error (no such mission)" },
            409: { ...htmlDoc, description: "text/html: the page with the error (the mission changed since the page was read: revision_conflict)" },
            503: { ...htmlDoc, description: "text/html: the page saying the bot is not configured" },
          },
        },
      },
    );
}
