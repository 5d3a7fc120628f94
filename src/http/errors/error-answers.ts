import type { AppContext } from "../../context";
import { SerializationFailure, StoreUnavailable, UnstorableText } from "../../db/port";
import { errorFields } from "../../log";
import { AppError, invalidRequest } from "./errors";
import { describeParamProblems } from "../params";
import { errorResponse, type RequestState, type RequestStates, refused } from "../request-state";
import type { RouteIndex } from "../routes/route-index";
import { describeValidationErrors, type RequestPart } from "./validation";
import { repeatedQueryKey, repeatedScalarIn } from "../query-once";

// The answer to anything thrown while serving a request (the HTTP core's error hook, src/http/core.ts): a catalog
// error in the JSON envelope — validation problems named by field, a lost database a 503, never a stack or SQL.

/** The refusal for one thrown error, and the server-side log of a 5xx. */
export function errorAnswers(ctx: AppContext, states: RequestStates, routes: RouteIndex) {
  /**
   * A 5xx AppError is the server's fault: the log gets its code, message, `internal` (what the caller must not
   * see) and cause, under the request id the caller was told to quote. 500 at level error; 502–504 (a
   * dependency or state the operator must fix: database, master key, backups) at warn. 4xx are the caller's
   * and are counted in the request log, not logged here; so are a probe's 503s (`quiet`: its answer says what failed,
   * and the failure itself is logged where it is found, once).
   */
  const logged = (error: AppError, state: RequestState | undefined, path: string): AppError => {
    if (error.status < 500 || error.quiet) return error;
    const fields = {
      request_id: state?.id,
      path,
      error_code: error.code,
      status: error.status,
      message: error.message,
      ...(error.internal === undefined ? {} : { internal: error.internal }),
      ...(error.cause === undefined ? {} : { cause: errorFields(error.cause).error }),
    };
    if (error.status === 500) ctx.log.error("request failed", fields);
    else ctx.log.warn("request failed", fields);
    return error;
  };

  /** What the error hook reads of Elysia's context. */
  interface ErrorHookContext {
    code: string | number;
    error: unknown;
    request: Request;
    path: string;
    route: string;
    params?: unknown;
  }
  /** The catalog error for anything thrown while serving a request, never a stack. */
  const problemOf = ({ code, error, request, path, route, params }: ErrorHookContext, state: RequestState | undefined): AppError => {
    if (error instanceof AppError) return logged(error, state, path);
    // Elysia wraps anything thrown by a parser in ParseError; our own parser throws AppErrors.
    const cause = (error as { cause?: unknown }).cause;
    if (code === "PARSE" && cause instanceof AppError) return logged(cause, state, path);
    if (code === "VALIDATION" && state?.parseError) return state.parseError;
    if (code === "VALIDATION") {
      const v = error as unknown as { type: RequestPart; all: Parameters<typeof describeValidationErrors>[1] };
      if (v.type === "response") {
        ctx.log.error("response failed its schema", { request_id: state?.id, path, errors: Array.isArray(v.all) ? v.all.slice(0, 5) : [] });
        return new AppError("server_error", "The server produced an invalid response; quote the request_id");
      }
      // A parameter given twice whose last value (the one Elysia read) fails: the repetition is the problem to name.
      const repeated = v.type === "body" ? null : repeatedScalarIn(request.url, routes.repeatableQueryKeys(request.method, route));
      if (repeated !== null) return repeatedQueryKey(repeated);
      // Elysia reports a refused coercion (a query "1.5" for an integer) as type "property" without the
      // parameter's name; the route's own schemas name it, with the allowed range.
      const named =
        v.type === "body"
          ? []
          : describeParamProblems(
              routes.schemasOf(request.method, route),
              new URL(request.url).searchParams,
              (params ?? {}) as Record<string, string | undefined>,
            );
      // A query value that fails while being decoded (an array item past its schema) arrives as TypeBox's
      // decode error: no `type`, no `all`, one inner ValueError. It is described like the others, never a 500.
      const inner = (error as unknown as { error?: { path?: unknown } }).error;
      const all = Array.isArray(v.all)
        ? v.all
        : inner && typeof inner.path === "string"
          ? [inner as Parameters<typeof describeValidationErrors>[1][number]]
          : [];
      const part: RequestPart = v.type === "body" ? "body" : v.type === "property" || !v.type ? "query" : v.type;
      const described = named.length ? named : describeValidationErrors(part, all);
      return invalidRequest(part === "body" ? "body" : "parameters", described.length ? described : [{ field: part, problem: "is not valid for this route" }]);
    }
    if (code === "PARSE") {
      return new AppError("invalid_payload", "Request body could not be parsed as JSON", { details: [{ field: "body", problem: "must be valid JSON" }] });
    }
    if (code === "NOT_FOUND") {
      const url = new URL(request.url);
      const allowed = routes.methodsFor(url.pathname);
      if (allowed.length && !allowed.includes(request.method)) {
        return new AppError("method_not_allowed", `${request.method} is not allowed on ${url.pathname}; use ${allowed.join(", ")}`, {
          headers: { allow: allowed.join(", ") },
        });
      }
      return new AppError("not_found", `No route ${request.method} ${url.pathname}; see /api/docs`);
    }
    // A text value held U+0000, which PostgreSQL cannot store and the SQLite engine refuses alike: the client's
    // input, so a 400 naming where it was (a %00 in the request target, else the body), never a 500.
    if (error instanceof UnstorableText) {
      const inTarget = /%00/i.test(request.url);
      const problem = "contains U+0000 (NUL), which Herald cannot store";
      const details = (inTarget ? nulFieldsOf(request.url) : ["body"]).map((field) => ({ field, problem }));
      const message = `Invalid ${inTarget ? "request parameters" : "request body"}: a text value contains U+0000 (NUL)`;
      return new AppError(inTarget ? "invalid_query" : "invalid_payload", message, { details, cause: error });
    }
    // The database did not answer (a lost connection, a server shutting down) or a transaction lost a race it
    // cannot win by waiting: a 503 the client retries, never a 500 (docs/design.md §8a).
    if (error instanceof StoreUnavailable || error instanceof SerializationFailure) {
      // An outage is one warning when it begins and one line when it ends (src/db/health.ts), with the count of
      // requests refused meanwhile; each refusal is a debug line and a request-log row.
      ctx.store.health.refusedRequest();
      ctx.log.debug("database unavailable", { request_id: state?.id, path, ...errorFields(error) });
      return new AppError("db_unavailable", "The database did not answer or was busy; retry with backoff", { headers: { "retry-after": "2" }, cause: error });
    }
    ctx.log.error("unhandled error", { request_id: state?.id, path, code: String(code), ...errorFields(error) });
    return new AppError("server_error", "Unexpected server error; quote the request_id when reporting it");
  };

  /**
   * The answer to anything thrown while serving a request: a catalog error in the JSON envelope — or, for a browser
   * on a console page, a query parameter the page refuses (or a form's body) shown as the page again with the message
   * (400), never a JSON answer in a browser tab (RequestState.pageRefusal). A page that cannot be drawn falls back to
   * the envelope.
   */
  const refusal = (hook: ErrorHookContext): Response | Promise<Response> => {
    const state = states.get(hook.request);
    const error = problemOf(hook, state);
    const page = state?.pageRefusal;
    if (!page || (error.code !== "invalid_query" && error.code !== "invalid_payload")) return errorResponse(error, state);
    refused(state, error);
    return page(error).catch((cause: unknown) => {
      ctx.log.warn("console page could not show its refusal", { request_id: state.id, path: hook.path, ...errorFields(cause) });
      return errorResponse(error, state);
    });
  };
  return refusal;
}

/** The query parameters (`query.<name>`, as a schema refusal names them) whose value holds U+0000, else "path" or "query". */
function nulFieldsOf(target: string): string[] {
  const url = new URL(target);
  const names = new Set<string>();
  for (const [name, value] of url.searchParams) if (value.includes("\0") || name.includes("\0")) names.add(`query.${name}`);
  if (names.size) return [...names];
  return [/%00/i.test(url.pathname) ? "path" : "query"];
}
