import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { Envelope, ignoredMetaQuery, ok } from "../http/envelope";
import { refuses } from "../http/routes/declare";
import { AppError } from "../http/errors/errors";
import { formRequestBody } from "../http/body/form-body";
import { named } from "../http/openapi/names";
import { ListAnswer, listAnswer, PageQuery, parseKeyPage } from "../http/pagination";
import { rateLimitHeaders } from "../http/rate-limit/rate-limit";
import { actorLabel } from "../auth/actors";
import { csrfField } from "./kit";
import { sha256Hex } from "../auth/admin";
import { recordAudit } from "../auth/audit";
import type { Guards } from "../auth/guards";
import { operatorPage, operatorPageResponse, signInBodyHtml } from "./frame";
import { redirect, SIGN_IN_PATH, safeNext, wantsHtml } from "../auth/session-plugin";
import { SESSION_CURSOR, sameDigest } from "../auth/sessions";
import { AdminSessionView } from "../auth/model";

// Operator sign-in (docs/operations.md, "Operator sign-in and pages"): the console's door, drawn in its frame; what
// it checks and records is auth's (admin tokens, sessions, the session cookie and its CSRF). The sign-in form
// protects itself against login CSRF (a foreign page signing the operator into the attacker's session) with a
// double-submit token: GET sets a random value in the cookie herald_signin_csrf (HttpOnly, SameSite=Strict,
// Path=/admin/sign-in, 30 min) and prints the same value into the form; POST requires both to match. A foreign page
// can neither read the cookie nor make the browser send it (SameSite=Strict). After sign-in, every form carries the
// session's own CSRF token (src/auth/sessions.ts).

const SIGN_IN_CSRF_COOKIE = "herald_signin_csrf";
const SIGN_IN_CSRF_MAX_AGE_SECONDS = 1800;
/** Sign-in attempts per client IP per minute: guessing tokens is hopeless anyway, this keeps the log quiet. */
export const SIGN_IN_ATTEMPTS_PER_MIN = 10;
const DEFAULT_NEXT = "/admin/ops/config";

const SignInForm = named(
  "SignInForm",
  t.Object(
    {
      token: t.String({ maxLength: 512, description: "An admin token (hat_…)" }),
      // Optional in the schema so that a missing token is the CSRF refusal (403), not a malformed form (400).
      csrf_token: t.Optional(t.String({ maxLength: 128, description: "The value printed into the form by GET /admin/sign-in" })),
      next: t.Optional(t.String({ maxLength: 1024, description: "An /admin/ path to go to after signing in; anything else is ignored" })),
    },
    { additionalProperties: false },
  ),
);
const SignOutForm = named("SignOutForm", t.Object(csrfField, { additionalProperties: false }));

const htmlPage = { 200: { description: "text/html", content: { "text/html": { schema: { type: "string" as const } } } } };
const seeOther = { 303: { description: "See Other: Location is the next page" } };

export function signInRoutes(ctx: AppContext, guards: Guards) {
  const op = guards.operator;
  const sessions = op.sessions;

  /** The sign-in form with a fresh double-submit token (and the cookie that carries it). */
  function formPage(request: Request, next: string | null, error: string | null, status: number): Response {
    const csrfToken = Buffer.from(ctx.rng.bytes(32)).toString("base64url");
    const page = operatorPage({ title: "Sign in · Herald", who: null, csrfToken: null, body: signInBodyHtml({ csrfToken, next, error }) });
    return operatorPageResponse(page, status, [op.cookie(request, SIGN_IN_CSRF_COOKIE, csrfToken, SIGN_IN_PATH, SIGN_IN_CSRF_MAX_AGE_SECONDS)]);
  }

  /** A refusal: the form again (with the catalog status) for a browser, the envelope for anyone else. */
  function refuse(request: Request, next: string | null, err: AppError): Response {
    if (!wantsHtml(request)) throw err;
    return formPage(request, next, err.message, err.status);
  }

  return new Elysia({ name: "herald:sign-in" })
    .use(op.plugin)
    .get(
      SIGN_IN_PATH,
      async ({ request, query }) => {
        const next = safeNext(query.next);
        const who = await op.identify(request);
        if (who?.session) return redirect(next ?? DEFAULT_NEXT);
        return formPage(request, next, null, 200);
      },
      {
        query: t.Object({ ...ignoredMetaQuery, next: t.Optional(t.String({ maxLength: 1024, description: "An /admin/ path to return to after signing in" })) }),
        detail: {
          tags: ["admin"],
          summary: "Operator sign-in form (HTML); sets the form's CSRF cookie herald_signin_csrf",
          responses: { ...htmlPage, 303: { description: "Already signed in: Location is `next` or the config page" } },
        },
      },
    )
    .post(
      SIGN_IN_PATH,
      async ({ request, body }) => {
        const { requestId, ip } = op.stateOf(request);
        const next = safeNext(body.next);
        const decision = ctx.rateLimiter.hit("admin-sign-in", ip, SIGN_IN_ATTEMPTS_PER_MIN);
        if (!decision.allowed) {
          const message = `Too many sign-in attempts from ${ip}; retry after ${decision.retryAfterSeconds} s`;
          return refuse(request, next, new AppError("rate_limited", message, { headers: rateLimitHeaders(decision) }));
        }
        const cookieToken = op.cookiesOf(request)[SIGN_IN_CSRF_COOKIE];
        if (!cookieToken || !body.csrf_token || !sameDigest(sha256Hex(cookieToken), sha256Hex(body.csrf_token))) {
          return refuse(request, next, new AppError("forbidden", "The sign-in form expired or did not come from this site: load /admin/sign-in and try again"));
        }
        const actor = body.token.trim() ? await guards.admin.tokens.verify(body.token.trim()) : null;
        const now = ctx.clock.now().toISOString();
        if (!actor) {
          await recordAudit(ctx.store, { at: now, actor: { kind: "public" }, action: "admin_session.sign_in_failed", details: { client_ip: ip }, requestId });
          return refuse(request, next, new AppError("unauthorized", "That is not a valid admin token"));
        }
        const session = await sessions.create(actor, { ip, userAgent: request.headers.get("user-agent") }, requestId);
        ctx.log.info("operator signed in", { request_id: requestId, actor: actorLabel(actor), session: session.handle });
        return redirect(next ?? DEFAULT_NEXT, [op.sessionCookie(request, session.sessionId), op.cookie(request, SIGN_IN_CSRF_COOKIE, "", SIGN_IN_PATH, 0)]);
      },
      {
        body: SignInForm,
        detail: {
          tags: ["admin"],
          summary: "Trade an admin token for a session cookie (form post); 303 to `next` (an /admin/ path) or the config page",
          requestBody: formRequestBody("Form fields token, csrf_token and optional next"),
          parameters: [
            {
              in: "cookie",
              name: SIGN_IN_CSRF_COOKIE,
              required: false,
              description: `The form's CSRF cookie, set by GET ${SIGN_IN_PATH}: send it back with the form's csrf_token (the same value). Without it, or with another value, 403`,
              schema: { type: "string" },
            },
          ],
          responses: {
            ...seeOther,
            401: { description: "Not a valid admin token (the form again for a browser, else the envelope)" },
            403: { description: "Missing or wrong form CSRF token" },
            429: { description: `More than ${SIGN_IN_ATTEMPTS_PER_MIN} attempts per minute from one IP` },
          },
        },
      },
    )
    .post(
      "/admin/sign-out",
      async ({ request, operator }) => {
        if (operator.session) await sessions.signOut(operator.session, operator.requestId);
        return redirect(SIGN_IN_PATH, [op.clearSessionCookie(request)]);
      },
      {
        operator: "form",
        body: SignOutForm,
        detail: {
          summary: "End this browser session (form post with csrf_token); 303 to the sign-in page",
          requestBody: formRequestBody("Form field csrf_token"),
          responses: { ...seeOther, 403: { description: "Missing or wrong CSRF token" } },
        },
      },
    )
    .get("/admin/sessions", async ({ query }) => ok(listAnswer("sessions", await sessions.list(parseKeyPage(query, SESSION_CURSOR)))), {
      operator: "api",
      query: t.Object(PageQuery),
      response: { 200: Envelope(ListAnswer("sessions", t.Array(AdminSessionView))) },
      detail: {
        summary: "Operator browser sessions, newest first (live ones and those ended in the last day), paged by limit and offset or cursor; no secrets",
      },
    })
    .post(
      "/admin/sessions/:id/revoke",
      async ({ params, operator }) => ok({ session: await sessions.revokeByHandle(params.id, operator.actor, operator.requestId) }),
      {
        operator: "api",
        params: t.Object({ id: t.String({ pattern: "^[0-9a-f]{16}$", description: "The session's public handle (16 hex characters)" }) }),
        response: { 200: Envelope({ session: AdminSessionView }), ...refuses(404) },
        detail: { summary: "Revoke a session by its public handle (with the cookie: X-CSRF-Token); audited" },
      },
    );
}
