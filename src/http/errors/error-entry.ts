// The shape of an error-catalog entry and its constructor, shared by src/http/errors/errors.ts and the domain blocks it
// spreads in (errors-messenger.ts).

export type RetryClass = "fail_fast" | "retryable" | "retry_after" | "safe_noop" | "fix_and_retry";
export type ErrorCategory =
  | "validation"
  | "authentication"
  | "authorization"
  | "not_found"
  | "conflict"
  | "throttling"
  | "idempotency"
  | "dependency"
  | "server";

export interface CatalogEntry {
  http_status: number;
  title: string;
  category: ErrorCategory;
  retry_class: RetryClass;
  retry_behavior: string;
  retry_after_seconds: number;
  available_in_modes: ReadonlyArray<"live" | "sandbox">;
  endpoint_groups: readonly string[];
  /**
   * Why this code answers a status the spec's HTTP status guide does not list (SPEC_GUIDE_STATUSES); null for a
   * status the guide lists. Served in errors.json, so a client that codes against the guide knows what the
   * other statuses mean and that the rule behind them is kept across the whole API.
   */
  status_rationale: string | null;
}

/** The statuses of the spec's HTTP status guide (spec "HTTP status guide"). */
export const SPEC_GUIDE_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 409, 413, 429, 500, 503]);

/**
 * The reason for each status outside the guide, the same for every code that answers it unless an entry gives
 * its own (`status_rationale` in `extra`). A new status without a line here leaves its entries without a
 * rationale, which test/http/error-catalog.test.ts refuses.
 */
export const STATUS_RATIONALES: Readonly<Record<number, string>> = {
  404: "The guide has no status for an object or route that does not exist. 404 Not Found (RFC 9110 §15.5.5) is what every HTTP client and cache already treats as 'check the id or path; retrying unchanged will not help'; a 400 would suggest a malformed request, a 409 a state that may change. Objects of another partner are answered the same way, so existence never leaks.",
  405: "The path exists but not with this method. 405 Method Not Allowed (RFC 9110 §15.5.6) with the Allow header tells the client which methods to use; a 404 would wrongly say the path is unknown.",
  408: "The request's body did not arrive in time: slower than the server's deadline for reading a body (a total time, and a minimum rate after a short grace period). 408 Request Timeout (RFC 9110 §15.5.9) is the status for a request message the server stopped waiting for, and it closes the connection; the guide's statuses all answer a request that arrived whole. Nothing was done, so the same request may be sent again.",
  410: "The object existed and can never be used again (expired or revoked, used once). 410 Gone (RFC 9110 §15.5.11) tells the client to stop retrying and not to look for a typo, as a 404 would suggest; nothing the client sends can make it valid again.",
  414: "The guide's 413 is about the body; a request target past 8,192 characters is refused before the body is read. 414 URI Too Long (RFC 9110 §15.5.15) says which part to shorten (send large inputs in a JSON body instead).",
  415: "The body is not JSON (or not UTF-8). 415 Unsupported Media Type (RFC 9110 §15.5.16) says to fix the Content-Type rather than the fields, which a 400 would suggest; form bodies are accepted only where a route documents them.",
  422: "The same idempotency key (Idempotency-Key, or the messenger's request_id) was sent again with another payload. One rule across the API, as in the IETF Idempotency-Key draft (draft-ietf-httpapi-idempotency-key-header, error scenarios): 422 for a key reused with another payload, 409 idempotency_in_progress while the first request with the key is still running, 409 idempotency_replay (or, for the messenger, the stored answer with replayed: true) once it completed. The request is well-formed (not a 400) and the state has not changed (not a 409): only a new key for the new payload helps.",
  428: "The route edits a versioned object and needs the revision the client read (X-Expected-Revision). 428 Precondition Required (RFC 6585 §3) is the status for a missing precondition on a conditional write, so a lost update is never possible by omission; a stale revision is the guide's 409 (revision_conflict).",
};

export const statusRationaleOf = (status: number): string | null => (SPEC_GUIDE_STATUSES.has(status) ? null : (STATUS_RATIONALES[status] ?? null));

export const BOTH = ["live", "sandbox"] as const;
export const ALL_GROUPS = ["partner", "sandbox", "salutes", "public", "transparency", "audio-share", "messenger", "admin"] as const;

/** The category of a code of each status, unless its entry names another (`category` in `extra`). */
const CATEGORY_OF_STATUS: Readonly<Record<number, ErrorCategory>> = {
  400: "validation",
  401: "authentication",
  403: "authorization",
  404: "not_found",
  405: "validation",
  408: "validation",
  409: "conflict",
  410: "not_found",
  413: "validation",
  414: "validation",
  415: "validation",
  422: "idempotency",
  428: "validation",
  429: "throttling",
  500: "server",
  503: "dependency",
};

/**
 * One catalog entry; defaults: the status's category, no Retry-After, both modes, every endpoint group, the status's
 * rationale. Its endpoint groups keep their names in its type, so a client's code can take the codes of a group from
 * the catalog's type (the mini-app's MessengerErrorCode: src/miniapp/browser/refusals.ts).
 */
export const entry = <const G extends readonly string[] = typeof ALL_GROUPS>(
  http_status: number,
  title: string,
  retry_class: RetryClass,
  retry_behavior: string,
  extra: Partial<CatalogEntry> & { endpoint_groups?: G } = {},
): CatalogEntry & { endpoint_groups: G } => {
  const category = CATEGORY_OF_STATUS[http_status];
  if (!category && !extra.category) throw new Error(`error catalog: no category for status ${http_status}; name one in the entry or in CATEGORY_OF_STATUS`);
  return {
    http_status,
    title,
    category: category!,
    retry_class,
    retry_behavior,
    retry_after_seconds: 0,
    available_in_modes: BOTH,
    endpoint_groups: ALL_GROUPS,
    status_rationale: statusRationaleOf(http_status),
    ...extra,
  } as CatalogEntry & { endpoint_groups: G };
};

/** `entry` for the codes of a block that all answer the same endpoint groups (and share `defaults`), named once. */
export const entriesOf =
  <const G extends readonly string[]>(endpoint_groups: G, defaults: Omit<Partial<CatalogEntry>, "endpoint_groups"> = {}) =>
  (http_status: number, title: string, retry_class: RetryClass, retry_behavior: string, extra: Omit<Partial<CatalogEntry>, "endpoint_groups"> = {}) =>
    entry(http_status, title, retry_class, retry_behavior, { endpoint_groups, ...defaults, ...extra });
