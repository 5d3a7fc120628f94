import { t } from "elysia";
import { ErrorBody } from "../http/envelope";
import { AppError, ValidationError } from "../http/errors";
import { formRequestBody } from "../http/body/form-body";
import { compileHtml, type SafeHtml } from "../http/html";
import { actorLabel } from "./actors";
import { operatorPage, operatorPageResponse } from "./operator-page";
import { type OperatorRequest, type RefusingPage, redirect, wantsHtml } from "./session-plugin";

// What every console page shares (src/ops/console/, src/auth/keys-page.ts, src/webhooks/dead-letters-page.ts,
// src/transparency/audit-runs-page.ts, src/messenger/admin/console-page.ts): the frame with the header marked,
// the result line a form's 303 brings back, a form's refusal re-rendered as the page with the error, and the
// OpenAPI descriptions of a page and of a form. Values are escaped by the templates (src/http/html.ts).

/** `2026-04-01 12:00:00 UTC` from an ISO time; null stays null. */
export const when = (iso: string | null | undefined): string | null => (iso ? `${iso.slice(0, 19).replace("T", " ")} UTC` : null);

/** A file size for a person: 512 B, 3.4 KiB, 12.0 MiB. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The form field every console form carries; optional in the schema so that a missing one is the CSRF refusal (403). */
export const csrfField = { csrf_token: t.Optional(t.String({ maxLength: 128, description: "The session's CSRF token, printed into every operator form" })) };

export interface Notice {
  /** A sentence shown as a success line (from the form's 303), or null. */
  done: string | null;
  /** A sentence shown as an error line (a refused form), or null. */
  error: string | null;
}

export const NO_NOTICE: Notice = { done: null, error: null };

const noticeHtml = compileHtml<Notice>(
  "console-notice",
  `<% if (it.done !== null) { %><section class="summary ready" id="done" role="status"><p><%= it.done %></p></section><% } %><% if (it.error !== null) { %><p class="error" id="form-error" role="alert"><%= it.error %></p><% } %>`,
);

export const notice = (n: Notice): SafeHtml => noticeHtml(n);

/** A whole console page for `operator`, its header link marked. */
export function consolePage(operator: OperatorRequest, title: string, current: string, body: SafeHtml, status = 200): Response {
  return operatorPageResponse(
    operatorPage({ title: `${title} · Herald`, current, who: actorLabel(operator.actor), csrfToken: operator.csrfToken, body }),
    status,
  );
}

/** After a form did its work: back to the page with a result code the page turns into its own sentence. */
export const backTo = (path: string, params: Record<string, string>) => redirect(`${path}?${new URLSearchParams(params).toString()}`);

export { wantsHtml };

/**
 * Runs a form's action. A refusal the caller can act on (an AppError below 500: a bad field, an unknown id, a
 * state that does not allow it) becomes, for a browser, the page again with the error and that status — never a
 * JSON answer in a browser tab; a script (no text/html in Accept) gets the JSON envelope, as from the JSON routes.
 */
export async function formAction(
  request: Request,
  action: () => Response | Promise<Response>,
  refuse: (status: number, message: string) => Response | Promise<Response>,
): Promise<Response> {
  try {
    return await action();
  } catch (err) {
    if (err instanceof AppError && err.status < 500 && wantsHtml(request)) {
      return refuse(err.status, err.message.startsWith("Nothing was") ? err.message : `Nothing was changed: ${err.message}`);
    }
    throw err;
  }
}

/**
 * The `operator` option of a console page whose query the schema bounds (`{ operator: refusingPage(refuseWith) }`
 * instead of `"page"`): a browser asking with a value out of range (`?hours=999`) gets the page drawn by
 * `refuse(operator)(400, message)` — its defaults, the message above them — as a refused form does, never a JSON
 * answer in a browser tab; a script (no text/html in Accept) gets the 400 invalid_query envelope naming the
 * parameter. `refuse` is the page's own, the one its forms' refusals use.
 */
export const refusingPage = (refuse: RefusingPage["refuse"]): RefusingPage => ({ refuse });

/** A form refused by the page's own check: 400 invalid_payload, 404 not_found or 409 conflict, with a message a person can act on. */
export function refusal(status: 400 | 404 | 409, message: string): AppError {
  if (status === 400) return new ValidationError(message);
  return new AppError(status === 404 ? "not_found" : "conflict", message);
}

const htmlContent = { "text/html": { schema: { type: "string" as const } } };
const jsonContent = { "application/json": { schema: ErrorBody } };

/**
 * OpenAPI for a page's answer without credentials (session-plugin.ts): a browser (Accept names text/html) is sent to
 * the sign-in form, which comes back to `path`; any other client is refused with the JSON envelope.
 */
export function notSignedInDoc(path: string) {
  return {
    303: { description: `Not signed in, from a browser (Accept names text/html): Location is /admin/sign-in?next=${path}` },
    403: {
      description: "forbidden (JSON envelope): not signed in and not a browser (no text/html in Accept), or a wrong bearer token",
      content: jsonContent,
    },
  };
}

/** OpenAPI for a console page (GET). */
export function pageDoc(summary: string, path: string, tags: string[] = ["admin"]) {
  return {
    tags,
    summary,
    responses: {
      200: { description: "text/html", content: htmlContent },
      ...notSignedInDoc(path),
      400: {
        description:
          "invalid_query: a parameter out of range — for a browser (Accept names text/html) the page again with the message, for a script the JSON envelope",
        content: { ...htmlContent, ...jsonContent },
      },
    },
  };
}

/** OpenAPI for a console form (POST, urlencoded, CSRF): 303 back on success, the page with the error otherwise. */
export function formDoc(summary: string, fields: string, refusals: Record<number, string>, tags: string[] = ["admin"]) {
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI media type objects of both contents
  const responses: Record<number, { description: string; content?: Record<string, { schema: any }> }> = {
    303: { description: "Done: back to the page with the result shown; or not signed in, from a browser: to /admin/sign-in" },
    403: { description: "Missing or wrong CSRF token, a wrong bearer token, or not signed in and not a browser (JSON envelope for a script)" },
  };
  for (const [status, what] of Object.entries(refusals)) {
    responses[Number(status)] = {
      description: `${what}: the page with the error (text/html) for a browser, the JSON envelope otherwise`,
      content: { ...htmlContent, ...jsonContent },
    };
  }
  return { tags, summary, requestBody: formRequestBody(`Form fields ${fields}`), responses };
}
