import { ErrorBody } from "../envelope";
import { ERROR_CATALOG } from "../errors";
import { errorResponseHeaders, PAGES } from "./contract";

// Typed error responses. Every failure is the one `Error` body whose `error` is a code of the catalog
// (src/http/errors.ts); a code's HTTP status is fixed by the catalog, so the codes a response of status S can
// carry are exactly the catalog's codes of status S. Each operation's declared error statuses point at one
// shared response per status (`#/components/responses/NotFound`) whose schema narrows `error` to those codes, and
// a `default` response covers the statuses any route may answer without declaring them (408, 413, 415, 500, 503 …).

type Json = Record<string, unknown>;

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  408: "RequestTimeout",
  409: "Conflict",
  410: "Gone",
  413: "PayloadTooLarge",
  414: "UriTooLong",
  415: "UnsupportedMediaType",
  422: "UnprocessableContent",
  429: "TooManyRequests",
  500: "ServerError",
  503: "ServiceUnavailable",
};

const ERROR_REF = "#/components/schemas/Error";
const codesOf = (status: number) =>
  Object.entries(ERROR_CATALOG)
    .filter(([, e]) => e.http_status === status)
    .map(([code]) => code);
const responseName = (status: number) => REASONS[status] ?? `Error${status}`;

/** components.schemas.ErrorCode: every code of the catalog, with its status and title for readers. */
export function errorCodeSchema(): Json {
  const codes = Object.keys(ERROR_CATALOG);
  return {
    type: "string",
    enum: codes,
    description:
      "Stable machine-readable code from the one catalog (/api/partner/errors.json); branch on this. " +
      codes.map((c) => `\`${c}\` ${ERROR_CATALOG[c as keyof typeof ERROR_CATALOG].http_status}`).join(", "),
  };
}

/** An operator page's refusal, as a browser gets it: the page again with the message (src/auth/console-kit.ts). */
const PAGE_ERROR = { "text/html": { schema: { type: "string", description: "The page, re-rendered with the refusal's message" } } };

function errorResponse(status: number | null, page = false): Json {
  const codes = status === null ? [] : codesOf(status);
  const schema: Json = codes.length
    ? { allOf: [{ $ref: ERROR_REF }, { type: "object", properties: { error: { type: "string", enum: codes } } }] }
    : { $ref: ERROR_REF };
  const reason = status === null ? "" : (REASONS[status] ?? `HTTP ${status}`).replace(/(?<=[a-z])(?=[A-Z])/g, " ");
  const description =
    status === null
      ? "Any failure: the Error body with one of the catalog's codes"
      : `${reason}: error is ${codes.length ? codes.map((c) => `\`${c}\``).join(" or ") : "a catalog code"}${page ? "; a browser gets the page with the message" : ""}`;
  return {
    description,
    headers: errorResponseHeaders(status, page),
    content: { "application/json": { schema }, ...(page && PAGE_ERROR) },
  };
}

/** A description the route wrote, not one a generator filled in (errorEntry's `HTTP 404`, ErrorBody's own). */
const routeSaid = (d: unknown): d is string => typeof d === "string" && d !== ErrorBody.description && !/^HTTP \d{3}$/.test(d);

/** A page's error declared without a body (its generator wrote only a description). */
const isBareError = (r: unknown) => !!r && typeof r === "object" && !("content" in r) && !("$ref" in r);

const isErrorSchemaRef = (r: unknown) => {
  const schema = (r as { content?: Record<string, { schema?: Json }> })?.content?.["application/json"]?.schema;
  return schema?.$ref === ERROR_REF;
};

/**
 * Whether the operation answers a browser's refusal with a page (HTML): an operator page or form, or a route that
 * says so (`answersPages()`, whose mark is removed here).
 */
function answersPages(path: string, op: Record<string, unknown> & { security?: Array<Record<string, unknown>> }): boolean {
  const marked = op[PAGES] === true;
  delete op[PAGES];
  return marked || path.startsWith("/admin/sign-") || (op.security ?? []).some((s) => "AdminSession" in s);
}

/** A refusal declared as the page only (text/html): the page twin of the shared response replaces it. */
const isPageOnly = (r: unknown) => {
  const content = (r as { content?: Record<string, unknown> })?.content;
  return !!content && Object.keys(content).every((m) => m.startsWith("text/html"));
};

/**
 * Points each operation's error responses (declared with the Error body) at the shared typed response of their
 * status (an operator page's at its HTML-or-JSON twin), adds `default`, and returns components.responses for
 * every status used.
 */
export function typeErrorResponses(paths: Record<string, Record<string, unknown>>): Record<string, Json> {
  const responses: Record<string, Json> = { Error: errorResponse(null) };
  for (const [path, item] of Object.entries(paths)) {
    for (const op of Object.values(item) as Array<
      Record<string, unknown> & { responses?: Record<string, unknown>; security?: Array<Record<string, unknown>> }
    >) {
      if (!op?.responses) continue;
      const page = answersPages(path, op);
      for (const [key, res] of Object.entries(op.responses)) {
        const status = Number(key);
        // 431 is Bun's bare refusal (contract.ts): no body, on pages too.
        if (!Number.isInteger(status) || status < 400 || status === 431 || !(isErrorSchemaRef(res) || (page && (isBareError(res) || isPageOnly(res)))))
          continue;
        const name = `${responseName(status)}${page ? "OrPage" : ""}`;
        responses[name] ??= errorResponse(status, page);
        // What the route says of this refusal (when, which code) stays beside the shared response: OpenAPI 3.1 lets a
        // reference carry its own description.
        const said = (res as { description?: unknown }).description;
        op.responses[key] = { $ref: `#/components/responses/${name}`, ...(routeSaid(said) && { description: said }) };
      }
      op.responses.default ??= { $ref: "#/components/responses/Error" };
    }
  }
  return responses;
}
