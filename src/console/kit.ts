import type { Static, TObject, TProperties } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { formRequestBody } from "../http/body/form-body";
import { refusal as refusalDoc } from "../http/routes/declare";
import { ErrorBody, ignoredMetaQuery } from "../http/envelope";
import { AppError, ValidationError } from "../http/errors/errors";
import { joinHtml, type SafeHtml } from "../http/formats/html";
import { actorLabel } from "../auth/actors";
import type { Guards } from "../auth/guards";
import { csrfInput, exportList, type Notice, notice, operatorPage, operatorPageResponse, pageHead, when } from "./frame";
import { type OperatorRequest, redirect, wantsHtml } from "../auth/session-plugin";

// The console route builder: one call draws an operator page and its forms (`consoleRoute`), so that every page
// shares the frame with its header link marked, the heading and "As of" line, the line a form's 303 brings back,
// the CSRF field of its forms, and one rule for refusals — a browser (Accept names text/html) always gets the page
// again with the message and the refusal's status, a script the JSON envelope (docs/operations.md, "The operator
// console"). The partials a view draws with are in frame.ts; values are escaped by the templates.

export { wantsHtml };

/** A whole console page for `operator`, its header link marked. */
export function framedPage(operator: OperatorRequest, title: string, current: string, body: SafeHtml, status = 200): Response {
  return operatorPageResponse(
    operatorPage({ title: `${title} · Herald`, current, who: actorLabel(operator.actor), csrfToken: operator.csrfToken, body }),
    status,
  );
}

/** After a form did its work: back to the page with a result the page turns into its own sentence. */
export const backTo = (path: string, params: Record<string, string>) => redirect(`${path}?${new URLSearchParams(params).toString()}`);

/** A form or page refused by its own check: 400 invalid_payload, 404 not_found or 409 conflict, with a message a person can act on. */
export function refusal(status: 400 | 404 | 409, message: string): AppError {
  if (status === 400) return new ValidationError(message);
  return new AppError(status === 404 ? "not_found" : "conflict", message);
}

/** What a page's load may do besides reading: refuse part of its query and still draw the page. */
export interface PageCall {
  operator: OperatorRequest;
  /**
   * The query was refused in part (a value the form cannot send, a run that does not exist): a script gets the
   * error's JSON envelope at once (this throws); a browser gets the page load goes on to draw, with the message and
   * the error's status.
   */
  refuse(error: AppError): void;
}

/** What a view is given besides its data. */
export interface Frame {
  operator: OperatorRequest;
  /** The CSRF field, for each of the page's POST forms. */
  csrf: SafeHtml;
  /** Whether the page is drawn for a refusal (its message above it). */
  refused: boolean;
}

type Values<P extends TProperties> = Static<TObject<P>>;

export interface FormSpec<B extends TProperties, P extends TProperties> {
  /** After the page's path: `/silences`, `/silences/:silence_id/end`. */
  path: string;
  params?: P;
  /** The form's fields besides csrf_token (added here, optional so that a missing one is the CSRF refusal, 403). */
  body?: B;
  summary: string;
  /** Status → what a refusal of that status means, for the OpenAPI document. */
  refusals: Record<number, string>;
  /** The words a refusal starts with (default "Nothing was changed"), unless its message starts with "Nothing was". */
  unchanged?: string;
  /** The page's query a refusal draws the page with (default: none, the page's defaults): the view the person was on. */
  keep?: (body: Values<B>, params: Values<P>) => Record<string, unknown>;
  /** Does the work: the query to go back to the page with (a 303), or a whole answer of its own. */
  run: (input: { operator: OperatorRequest; body: Values<B>; params: Values<P>; request: Request }) => Promise<Record<string, string> | Response>;
  /** OpenAPI responses besides the 303, 403 and refusals. */
  responses?: Record<number, { description: string }>;
}

/** A form of a console page, its types checked here and then erased: a page holds forms of different fields. */
export type ConsoleForm = FormSpec<TProperties, TProperties>;
export const form = <B extends TProperties = Record<never, never>, P extends TProperties = Record<never, never>>(f: FormSpec<B, P>): ConsoleForm =>
  f as unknown as ConsoleForm;

export interface DoneSpec {
  /** The query field that names what the form changed (a silence id, a key id…), and what it may look like. */
  field: string;
  pattern: RegExp;
  /** `done` → the sentence for it; anything else, or a value the pattern refuses, shows nothing. */
  says: Record<string, (ref: string, query: Record<string, unknown>) => string | null>;
}

export interface PageSpec<Q extends TProperties, P extends TProperties, D> {
  path: string;
  title: string;
  /** The CONSOLE_NAV entry marked in the header (default: path). */
  nav?: string;
  /** The h1 when it is not the title (one alert's page). */
  heading?: (data: D) => string;
  /** A sentence after "As of …" saying what the page shows. */
  lead?: string | ((data: D) => string);
  summary: string;
  tags?: string[];
  /** Refusals besides 400 invalid_query, for the OpenAPI document. */
  refusals?: Record<number, string>;
  query?: Q;
  params?: P;
  /** The result line of the page's forms (their redirect's `done` and `field`). */
  done?: DoneSpec;
  /** What the page shows for a query (`{}` after a refusal: the page's defaults). */
  load: (query: Partial<Values<Q> & Values<P>>, call: PageCall) => Promise<D> | D;
  view: (data: D, frame: Frame) => SafeHtml;
  /** The exports listed at the page's foot, below the view (none: null). */
  exports?: (data: D, frame: Frame) => Parameters<typeof exportList>[0] | null;
  forms?: ConsoleForm[];
}

/** The line a form's redirect asks for, if it is one of ours. */
function doneOf(spec: DoneSpec | undefined, query: Record<string, unknown>): string | null {
  const done = query.done;
  const ref = query[spec?.field ?? ""];
  if (!spec || typeof done !== "string" || !Object.hasOwn(spec.says, done) || typeof ref !== "string" || !spec.pattern.test(ref)) return null;
  return spec.says[done]!(ref, query);
}

/**
 * A console page: GET `path` draws `view(load(query))` in the frame, and each form posts to `path + form.path`.
 * Refusals, all drawn as the page for a browser and answered with the JSON envelope for a script: a query value
 * the schema refuses, and an error load throws, draw the page with its defaults and the message; one load passes
 * to `call.refuse` draws what load goes on to return; a form's refusal draws the page with `keep`'s query.
 */
export function consoleRoute<Q extends TProperties = Record<never, never>, P extends TProperties = Record<never, never>, D = unknown>(
  ctx: AppContext,
  guards: Guards,
  spec: PageSpec<Q, P, D>,
) {
  type State = Partial<Values<Q> & Values<P>>;
  const nav = spec.nav ?? spec.path;

  async function render(operator: OperatorRequest, state: State, shown: Notice, status: number, request?: Request): Promise<Response> {
    let refused: AppError | null = null;
    const call: PageCall = {
      operator,
      refuse(error) {
        if (request && !wantsHtml(request)) throw error;
        refused ??= error;
      },
    };
    const data = await spec.load(state, call);
    const r = refused as AppError | null;
    const lead = typeof spec.lead === "function" ? spec.lead(data) : (spec.lead ?? "");
    const head = pageHead({
      heading: spec.heading?.(data) ?? spec.title,
      generatedAt: when(ctx.clock.now().toISOString())!,
      lead,
      notice: notice(r ? { done: null, error: r.message } : shown),
    });
    const frame: Frame = { operator, csrf: csrfInput(operator.csrfToken), refused: r !== null || shown.error !== null };
    const exports = spec.exports?.(data, frame);
    const parts = [head, spec.view(data, frame), ...(exports ? [exportList(exports)] : [])];
    return framedPage(operator, spec.title, nav, joinHtml(parts), r?.status ?? status);
  }

  const refuse =
    (operator: OperatorRequest, state: State = {}) =>
    (status: number, error: string) =>
      render(operator, state, { done: null, error }, status);

  const doneFields = spec.done
    ? {
        done: t.Optional(t.String({ maxLength: 80, description: `set by a form's redirect: ${Object.keys(spec.done.says).join(", ")}` })),
        ...(spec.query && spec.done.field in spec.query
          ? {}
          : { [spec.done.field]: t.Optional(t.String({ maxLength: 128, description: "set by a form's redirect: what it changed" })) }),
      }
    : {};

  const app = new Elysia({ name: `herald:console${spec.path}` }).use(guards.operator.plugin).get(
    spec.path,
    async ({ operator, query, params, request }) => {
      const state = { ...query, ...params } as State;
      try {
        return await render(operator, state, { done: doneOf(spec.done, query), error: null }, 200, request);
      } catch (err) {
        if (err instanceof AppError && err.status < 500 && wantsHtml(request)) return refuse(operator)(err.status, err.message);
        throw err;
      }
    },
    {
      // A query value the schema refuses: for a browser, the page with its defaults and the message (session-plugin.ts).
      operator: { refuse },
      query: t.Object({ ...ignoredMetaQuery, ...doneFields, ...spec.query }),
      params: spec.params ? t.Object(spec.params) : undefined,
      detail: pageDoc(spec.summary, spec.path, spec.tags, spec.refusals),
    },
  );

  // Each post registers on the same instance (Elysia's chain returns it), so the page and its forms are one plugin.
  for (const f of spec.forms ?? []) {
    app.post(
      `${spec.path}${f.path}`,
      async ({ operator, body, params, request }) => {
        const input = { operator, body: body as Values<TProperties>, params: params as Values<TProperties>, request };
        try {
          const done = await f.run(input);
          return done instanceof Response ? done : backTo(spec.path, done);
        } catch (err) {
          // A failure of the work itself (a disk that refused a backup) too is the page with the message for a
          // browser, never a JSON answer in a browser tab.
          if (!(err instanceof AppError) || !wantsHtml(request)) throw err;
          if (err.status >= 500)
            ctx.log.warn("console form failed", { request_id: operator.requestId, path: f.path, error_code: err.code, internal: err.internal });
          const message = err.message.startsWith("Nothing was") ? err.message : `${f.unchanged ?? "Nothing was changed"}: ${err.message}`;
          return refuse(operator, (f.keep?.(input.body, input.params) ?? {}) as State)(err.status, message);
        }
      },
      {
        // A body the schema refuses (a hand-made post: the form's inputs carry its bounds): the page again for a browser.
        operator: {
          form: true,
          refuse: (op: OperatorRequest) => (status: number, error: string) => refuse(op)(status, `${f.unchanged ?? "Nothing was changed"}: ${error}`),
        },
        params: f.params ? t.Object(f.params) : undefined,
        body: t.Object({ ...csrfField, ...f.body }, { additionalProperties: false }),
        detail: formDoc(f, spec.tags),
      },
    );
  }
  return app;
}

/** The form field every console form carries; optional in the schema so that a missing one is the CSRF refusal (403). */
export const csrfField = { csrf_token: t.Optional(t.String({ maxLength: 128, description: "The session's CSRF token, printed into every operator form" })) };

const htmlContent = { "text/html": { schema: { type: "string" as const } } };
const pageOrJson = { ...htmlContent, "application/json": { schema: ErrorBody } };

/**
 * OpenAPI for a page's answer without credentials (session-plugin.ts): a browser (Accept names text/html) is sent to
 * the sign-in form, which comes back to `path`; any other client is refused with the JSON envelope.
 */
export function notSignedInDoc(path: string) {
  return {
    303: { description: `Not signed in, from a browser (Accept names text/html): Location is /admin/sign-in?next=${path}` },
    403: refusalDoc("forbidden (JSON envelope): not signed in and not a browser (no text/html in Accept), or a wrong bearer token"),
  };
}

function pageDoc(summary: string, path: string, tags: string[] = ["admin"], refusals: Record<number, string> = {}) {
  const refused = (what: string) => ({
    description: `${what}: for a browser (Accept names text/html) the page again with the message, for a script the JSON envelope`,
    content: pageOrJson,
  });
  return {
    tags,
    summary,
    responses: {
      200: { description: "text/html", content: htmlContent },
      ...notSignedInDoc(path.replace(/:(\w+)/g, "{$1}")),
      400: refused("invalid_query: a parameter out of range"),
      ...Object.fromEntries(Object.entries(refusals).map(([status, what]) => [status, refused(what)])),
    },
  };
}

/** OpenAPI for a console form (POST, urlencoded, CSRF): 303 back on success, the page with the error otherwise. */
function formDoc(f: ConsoleForm, tags: string[] = ["admin"]) {
  const responses: Record<number, { description: string; content?: typeof pageOrJson }> = {
    303: { description: "Done: back to the page with the result shown; or not signed in, from a browser: to /admin/sign-in" },
    403: { description: "Missing or wrong CSRF token, a wrong bearer token, or not signed in and not a browser (JSON envelope for a script)" },
    ...f.responses,
  };
  for (const [status, what] of Object.entries(f.refusals)) {
    responses[Number(status)] = { description: `${what}: the page with the error (text/html) for a browser, the JSON envelope otherwise`, content: pageOrJson };
  }
  const fields = ["csrf_token", ...Object.keys(f.body ?? {})].join(", ");
  return { tags, summary: f.summary, requestBody: formRequestBody(`Form fields ${fields}`), responses };
}
