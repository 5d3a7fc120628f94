import { parseCookie, stringifySetCookie } from "cookie";
import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { OPERATOR_NO_STORE } from "../http/caching/cache-control";
import type { RequestStates } from "../http/core";
import { AppError } from "../http/errors/errors";
import type { AdminAuth } from "./admin-plugin";
import { type ActiveSession, type AdminActor, AdminSessions, csrfTokenOf } from "./sessions";

// Who may see an operator page or call an operator route from a browser (docs/operations.md, "Operator sign-in
// and pages"): an admin bearer token (curl, scripts) or the session cookie from POST /admin/sign-in. A request
// that carries an Authorization header is judged by it alone (a wrong token is 403, never a fallback to the
// cookie). State-changing requests made with the cookie must also prove they come from our own page: the CSRF
// token, from the form field `csrf_token` or the header `X-CSRF-Token`. A bearer token is not sent by the browser
// on its own, so bearer requests need no CSRF token.

export const SESSION_COOKIE = "herald_admin_session";
export const SIGN_IN_PATH = "/admin/sign-in";

export interface OperatorRequest {
  actor: AdminActor;
  requestId: string;
  ip: string;
  /** The browser session, when the request was authenticated by the cookie (null for a bearer token). */
  session: ActiveSession | null;
  /** The session's CSRF token, to print into the page's forms (null for a bearer token). */
  csrfToken: string | null;
}

/**
 * page: a GET page; without credentials → a browser (Accept names text/html) is sent 303 to the sign-in page with
 *   `next` set to this page, any other client gets 403 with the JSON envelope (the spec: admin endpoints "answer
 *   403 to others"; a script has no use for a form).
 * api: a JSON route; without credentials → 403; with the cookie on anything but GET, X-CSRF-Token is required.
 * form: a form POST; without credentials → 303 to the sign-in page for a browser, 403 otherwise, as a page; with
 *   the cookie, the form's csrf_token. As a RefusingPage with `form: true`, a body the schema refuses is the page again
 *   for a browser, as a page's refused query is.
 */
export type OperatorMode = "page" | "api" | "form" | RefusingPage;

const isForm = (mode: OperatorMode) => mode === "form" || (typeof mode === "object" && mode.form === true);

/**
 * A page (as "page") that answers a browser's refused query parameter (400 invalid_query: out of range, not a
 * number, given twice) with itself again, the message on top, through `refuse` — src/console/kit.ts `consoleRoute` gives every page one.
 * Without a session the browser is sent to sign in, as for the page; a script still gets the JSON envelope.
 */
export interface RefusingPage {
  refuse: (operator: OperatorRequest) => (status: number, message: string) => Response | Promise<Response>;
  /** A form's POST: its refused body (400 invalid_payload) is the page again; no `next` back to a POST path. */
  form?: true;
}

/** Only our own operator paths may be a `next` target: a relative /admin/ path, nothing that leaves the origin. */
export function safeNext(next: string | null | undefined): string | null {
  if (typeof next !== "string" || next.length > 1024) return null;
  // "//evil", "/\\evil", "/admin/../x", control characters and backslashes are all refused.
  if (!/^\/admin\/[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*$/.test(next) || next.startsWith("//") || /(^|\/)\.\.?(\/|$|\?)/.test(next)) return null;
  if (next.startsWith(SIGN_IN_PATH)) return null;
  return next;
}

/** A browser's request (its Accept names text/html): it gets pages; a script (fetch's default Accept is any type) gets the JSON envelope. */
export const wantsHtml = (request: Request) => (request.headers.get("accept") ?? "").includes("text/html");

const notSignedIn = () => new AppError("forbidden", "This route is for operators: send Authorization: Bearer <admin token>, or sign in at /admin/sign-in");

export const signInLocation = (next: string | null) => (next ? `${SIGN_IN_PATH}?next=${encodeURIComponent(next)}` : SIGN_IN_PATH);

export function redirect(location: string, setCookies: string[] = []): Response {
  const headers = new Headers({ location, "cache-control": OPERATOR_NO_STORE });
  for (const c of setCookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

export function adminSessionAuth(ctx: AppContext, states: RequestStates, admin: AdminAuth) {
  const sessions = new AdminSessions(ctx);
  const resolved = new WeakMap<Request, OperatorRequest | null>();

  const stateOf = (request: Request) => {
    const state = states.get(request);
    return { requestId: state?.id ?? "unknown", ip: state?.ip ?? "unknown" };
  };

  /** The cookie jar of a request (names → values); a malformed header reads as no cookies. */
  const cookiesOf = (request: Request) => {
    const header = request.headers.get("cookie");
    return header ? parseCookie(header) : {};
  };

  /** The operator behind a request, or null; a present but wrong bearer token is 403 at once. */
  async function identify(request: Request): Promise<OperatorRequest | null> {
    if (request.headers.has("authorization")) {
      const { actor, requestId } = await admin.authenticate(request);
      return { actor, requestId, ip: stateOf(request).ip, session: null, csrfToken: null };
    }
    const sessionId = cookiesOf(request)[SESSION_COOKIE];
    const session = sessionId ? await sessions.resolve(sessionId) : null;
    if (!session || !sessionId) return null;
    return { actor: session.actor, ...stateOf(request), session, csrfToken: csrfTokenOf(sessionId) };
  }

  /**
   * Before the query is checked: a browser's refusal on a RefusingPage becomes the page with the message (a signed-in
   * operator) or the way to sign in (none yet; `next` keeps the query, so the page shows the message after it).
   */
  function pageRefusalFor(request: Request, who: OperatorRequest | null, page: RefusingPage): void {
    const state = states.get(request);
    if (!state || !wantsHtml(request)) return;
    state.pageRefusal = async (error) => {
      if (who) return page.refuse(who)(error.status, error.message);
      const url = new URL(request.url);
      return redirect(signInLocation(page.form ? null : safeNext(url.pathname + url.search)));
    };
  }

  const csrfRefused = () => new AppError("forbidden", "Missing or wrong CSRF token: reload the page and submit its form again (or send Authorization: Bearer)");

  /**
   * Whether the cookie should carry Secure: always in production (a production Herald is reached over https, if only
   * through its proxy, and a session cookie must never travel in clear), when the public address is https, or when
   * this request came over https. Development over http keeps it off, or the browser would drop the cookie and
   * sign-in on http://localhost would never stick.
   */
  function secure(request: Request): boolean {
    if (ctx.config.isProduction || ctx.config.publicBaseUrl.startsWith("https:")) return true;
    if (new URL(request.url).protocol === "https:") return true;
    return ctx.config.trustProxy && request.headers.get("x-forwarded-proto")?.split(",").pop()?.trim() === "https";
  }

  const cookie = (request: Request, name: string, value: string, path: string, maxAgeSeconds: number) =>
    stringifySetCookie(name, value, { httpOnly: true, sameSite: "strict", path, maxAge: maxAgeSeconds, secure: secure(request) });

  return {
    sessions,
    stateOf,
    identify,
    cookiesOf,
    cookie,
    /** Set-Cookie for a new session: HttpOnly, SameSite=Strict, Path=/admin, Max-Age = ADMIN_SESSION_TTL_SECONDS. */
    sessionCookie: (request: Request, sessionId: string) => cookie(request, SESSION_COOKIE, sessionId, "/admin", ctx.config.adminSessionTtlSeconds),
    clearSessionCookie: (request: Request) => cookie(request, SESSION_COOKIE, "", "/admin", 0),
    plugin: new Elysia({ name: "herald:admin-session" }).macro({
      operator: (mode: OperatorMode) => ({
        async transform({ request }: { request: Request }) {
          const who = await identify(request);
          if (typeof mode === "object") pageRefusalFor(request, who, mode);
          // JSON routes, and pages and forms asked for by anything but a browser, refuse at once (before any body is
          // looked at), as the bearer guard does. A browser is sent to the sign-in form (beforeHandle).
          if (!who && (mode === "api" || !wantsHtml(request))) throw notSignedIn();
          if (who?.session && mode === "api" && request.method !== "GET" && request.method !== "HEAD") {
            if (!sessions.csrfMatches(who.session, request.headers.get("x-csrf-token"))) throw csrfRefused();
          }
          resolved.set(request, who);
        },
        beforeHandle({ request, body }: { request: Request; body: unknown }) {
          const who = resolved.get(request);
          if (!who) {
            const url = new URL(request.url);
            return redirect(signInLocation(isForm(mode) ? null : safeNext(url.pathname + url.search)));
          }
          if (who.session && isForm(mode)) {
            const token = (body as { csrf_token?: unknown } | undefined)?.csrf_token;
            if (!sessions.csrfMatches(who.session, typeof token === "string" ? token : null)) throw csrfRefused();
          }
        },
        resolve({ request }: { request: Request }) {
          return { operator: resolved.get(request)! };
        },
        detail: { security: [{ AdminBearer: [] }, { AdminSession: [] }], tags: ["admin"] },
      }),
    }),
  };
}
