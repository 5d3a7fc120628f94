import { isOperatorPath } from "../caching/cache-control";
import { ErrorBody } from "../envelope";
import { ERROR_CATALOG } from "../errors/errors";
import { errorResponseHeaders, type Operation, PAGES, type ResponseKind, takeMark } from "./contract";

// Typed error responses. Every failure is the one `Error` body whose `error` is a code of the catalog
// (src/http/errors/errors.ts); a code's HTTP status is fixed by the catalog, so the codes a response of status S can
// carry are exactly the catalog's codes of status S. Each operation's declared error statuses point at one
// shared response per status (`#/components/responses/NotFound`) whose schema narrows `error` to those codes, and
// a `default` response covers the statuses any route may answer without declaring them (408, 413, 415, 500, 503 …).
// Two answers are not the plain Error body: a signed mutation's 409 may be the replay of its completed first request
// (IdempotencyReplay: the first answer's status and body), so its 409 is `ConflictOrReplay`; and an operator route's
// refusals carry Cache-Control (src/http/caching/cache-control.ts), so they point at `Operator<Status>` twins that declare it.

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
/** The one code whose body is not the plain Error: answered only by a signed mutation (its IdempotencyReplay). */
const REPLAY = "idempotency_replay";
const IDEMPOTENCY_REPLAY_REF = "#/components/schemas/IdempotencyReplay";
/** The codes a plain Error body of this status carries. */
const codesOf = (status: number) =>
  Object.entries(ERROR_CATALOG)
    .filter(([code, e]) => e.http_status === status && code !== REPLAY)
    .map(([code]) => code);
const responseName = (status: number) => REASONS[status] ?? `Error${status}`;

/** components.schemas.IdempotencyReplay, the answer src/auth/idempotency.ts stores with a signed mutation's effect. */
export function idempotencyReplaySchema(): Json {
  return {
    type: "object",
    description:
      "409 idempotency_replay: a request with this Idempotency-Key and the same method, target and body already completed; nothing was done again. " +
      "original_status and original_response are the first request's answer (also sent with the header Idempotent-Replayed: true)",
    required: ["success", "error", "message", "request_id", "original_status", "original_response"],
    additionalProperties: false,
    properties: {
      success: { const: false },
      error: { const: REPLAY },
      message: { type: "string", description: "For people and logs; may change." },
      request_id: { type: "string" },
      original_status: {
        type: "integer",
        minimum: 200,
        maximum: 299,
        description: "The HTTP status the first request got (a success: a failed request stores nothing)",
      },
      original_response: {
        type: "object",
        additionalProperties: true,
        description: "The body the first request got, as it was answered (that operation's success body)",
      },
    },
  };
}

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

/** An operator page's refusal, as a browser gets it: the page again with the message (src/console/kit.ts). */
const PAGE_ERROR = { "text/html": { schema: { type: "string", description: "The page, re-rendered with the refusal's message" } } };

function errorResponse(status: number | null, kind: ResponseKind): Json {
  const codes = status === null ? [] : codesOf(status);
  const narrowed: Json = codes.length
    ? { allOf: [{ $ref: ERROR_REF }, { type: "object", properties: { error: { type: "string", enum: codes } } }] }
    : { $ref: ERROR_REF };
  const replay = kind === "replay";
  const schema: Json = replay ? { oneOf: [narrowed, { $ref: IDEMPOTENCY_REPLAY_REF }] } : narrowed;
  const reason = status === null ? "" : (REASONS[status] ?? `HTTP ${status}`).replace(/(?<=[a-z])(?=[A-Z])/g, " ");
  const description =
    status === null
      ? "Any failure: the Error body with one of the catalog's codes"
      : `${reason}: error is ${codes.length ? codes.map((c) => `\`${c}\``).join(" or ") : "a catalog code"}` +
        (replay ? `, or \`${REPLAY}\` (IdempotencyReplay: the completed first request's answer)` : "") +
        (kind === "page" ? "; a browser gets the page with the message" : "");
  return {
    description,
    headers: errorResponseHeaders(status, kind),
    content: { "application/json": { schema }, ...(kind === "page" && PAGE_ERROR) },
  };
}

/** The shared response's name for a status and kind: NotFound, NotFoundOrPage, OperatorNotFound, ConflictOrReplay. */
const sharedName = (status: number, kind: ResponseKind) =>
  kind === "page"
    ? `${responseName(status)}OrPage`
    : kind === "operator"
      ? `Operator${responseName(status)}`
      : `${responseName(status)}${kind === "replay" ? "OrReplay" : ""}`;

/** A signed mutation: its Idempotency-Key may replay the first answer (409 idempotency_replay). */
const signedMutation = (op: Operation) =>
  (op.security ?? []).some((s) => "PartnerKey" in s) &&
  (op.parameters ?? []).some((p) => p.in === "header" && String(p.name).toLowerCase() === "idempotency-key");

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
function answersPages(path: string, op: Operation): boolean {
  return takeMark(op, PAGES) === true || path.startsWith("/admin/sign-") || (op.security ?? []).some((s) => "AdminSession" in s);
}

/** A refusal declared as the page only (text/html): the page twin of the shared response replaces it. */
const isPageOnly = (r: unknown) => {
  const content = (r as { content?: Record<string, unknown> })?.content;
  return !!content && Object.keys(content).every((m) => m.startsWith("text/html"));
};

/** components.responses before any operation points at one: `Error`, which every `default` refers to. */
export const sharedErrorResponses = (): Record<string, Json> => ({ Error: errorResponse(null, "plain") });

/**
 * Points the operation's error responses (declared with the Error body) at the shared typed response of their
 * status (an operator page's at its HTML-or-JSON twin), adds `default`, and adds to `responses` (components.responses)
 * each shared response it points at.
 */
export function typeErrorResponses(path: string, op: Operation, responses: Record<string, Json>): void {
  if (!op?.responses) return;
  const page = answersPages(path, op);
  const replays = signedMutation(op);
  const operator = isOperatorPath(path);
  for (const [key, res] of Object.entries(op.responses)) {
    const status = Number(key);
    // 431 is Bun's bare refusal (contract.ts): no body, on pages too.
    if (!Number.isInteger(status) || status < 400 || status === 431 || !(isErrorSchemaRef(res) || (page && (isBareError(res) || isPageOnly(res))))) continue;
    const kind: ResponseKind = page ? "page" : operator ? "operator" : replays && status === 409 ? "replay" : "plain";
    const name = sharedName(status, kind);
    responses[name] ??= errorResponse(status, kind);
    // What the route says of this refusal (when, which code) stays beside the shared response: OpenAPI 3.1 lets a
    // reference carry its own description.
    const said = (res as { description?: unknown }).description;
    op.responses[key] = { $ref: `#/components/responses/${name}`, ...(routeSaid(said) && { description: said }) };
  }
  op.responses.default ??= { $ref: "#/components/responses/Error" };
}
