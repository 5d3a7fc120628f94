// The ONE error catalog. Every error Herald answers with is an AppError carrying one of these codes; the
// catalog also serves /api/partner/errors.json and /developers/api-errors.json, so docs and behaviour agree.
// A large domain keeps its block in a file of its own (errors-messenger.ts), spread in here: still one catalog.
// Those blocks stay in http/, not in their domain: the catalog is read below every domain — an AppError takes its
// status from it when made (in auth/, the CLI, a worker, before any app is built), core.ts answers by it, the
// OpenAPI document lists its codes — and ErrorCode is its keys, so a code it lacks does not compile. Composed from
// the domains in app.ts instead, it would be filled at start (module state), a code unknown until then.
import { type CatalogEntry, entriesOf, entry } from "./error-entry";
import { MESSENGER_ERRORS } from "./errors-messenger";
import { MESSENGER_ADMIN_ERRORS } from "./errors-messenger-admin";

export type { CatalogEntry, ErrorCategory, RetryClass } from "./error-entry";

/** Codes of one area, its endpoint groups named once: the signed partner API, its users, operators, audio-share links. */
const signed = entriesOf(["partner", "sandbox", "salutes"]);
/** The signed API's Idempotency-Key codes, whatever their status. */
const idempotency = entriesOf(["partner", "sandbox", "salutes"], { category: "idempotency" });
const partnerUsers = entriesOf(["partner", "sandbox"]);
const admin = entriesOf(["admin"]);
const audioShare = entriesOf(["audio-share"]);

export const ERROR_CATALOG = {
  invalid_payload: entry(400, "Invalid payload", "fix_and_retry", "Fix the fields named in details and send again."),
  invalid_query: entry(400, "Invalid query parameter", "fix_and_retry", "Fix the query parameters named in details and send again."),
  offset_too_large: entry(
    400,
    "Offset too deep: page with the cursor",
    "fix_and_retry",
    "A list that issues cursors pages by offset only up to 10,000 rows (an offset costs the server every row it skips). Page deeper with cursor: pass pagination.next_cursor of the previous page as cursor (without offset); each page then costs the same however deep. Lists paged by offset only (their next_cursor is always null) are not limited.",
    { endpoint_groups: ["partner", "sandbox", "salutes", "transparency", "messenger", "admin"] },
  ),
  unauthorized: entry(401, "Unauthorized", "fail_fast", "Check the key id, secret, timestamp and signature inputs; do not retry unchanged."),
  forbidden: entry(
    403,
    "Forbidden",
    "fail_fast",
    "The credential lacks a scope, is disabled, is used from a disallowed IP or in the wrong mode; use the right key or request an upgrade.",
  ),
  not_found: entry(404, "Not found", "fail_fast", "Check the path and the id; objects of other partners are reported as not found."),
  method_not_allowed: entry(405, "Method not allowed", "fail_fast", "Use one of the methods listed in the Allow header."),
  request_timeout: entry(
    408,
    "Request body too slow",
    "retryable",
    "The body did not arrive within the server's deadline (REQUEST_BODY_TIMEOUT_MS, default 10 s, and at least REQUEST_BODY_MIN_BYTES_PER_SEC, default 1,024 bytes per second, after its first 2 s). Nothing was done and the connection was closed: send the whole body at once, on a new connection; the same Idempotency-Key is fine.",
  ),
  conflict: entry(409, "Conflict", "fail_fast", "The request conflicts with the current state; fetch the latest state before deciding."),
  payload_too_large: entry(413, "Payload too large", "fix_and_retry", "Send a smaller body; the limit is in the message."),
  uri_too_long: entry(
    414,
    "Request target too long",
    "fix_and_retry",
    "Shorten the path and query string (8,192 characters at most); send large inputs in a JSON body.",
  ),
  unsupported_media_type: entry(415, "Unsupported media type", "fix_and_retry", "Send the body as application/json."),
  rate_limited: entry(429, "Rate limited", "retry_after", "Back off; honour Retry-After and X-RateLimit-Reset before the next request.", {
    retry_after_seconds: 60,
  }),
  server_error: entry(500, "Server error", "retryable", "Retry with capped exponential backoff; quote the request_id to the operators if it persists.", {
    retry_after_seconds: 1,
  }),
  db_unavailable: entry(503, "Database unavailable", "retryable", "Retry with jittered backoff (1, 2, 4, 8 s, capped at 30 s).", {
    retry_after_seconds: 2,
  }),
  backup_not_on_postgres: admin(
    409,
    "Backups are the database's own on PostgreSQL",
    "fail_fast",
    "This service runs on PostgreSQL, where Herald's on-demand backups (a SQLite VACUUM INTO copy) and Litestream do not apply; retrying will not help. Operators: back up and restore with PostgreSQL's own tools — pg_dump / pg_restore for a copy, pg_basebackup with WAL archiving for point-in-time recovery (docs/postgres.md).",
  ),
  backup_in_progress: admin(
    409,
    "A backup is already running",
    "fail_fast",
    "Another backup is running on this instance (details.backup_id, its phase and percent); its result is the backup you asked for, so do not start another: follow it at details.status_url (GET /admin/backup/status) until `running` is null, then read `last`. Run again only if you need a newer copy than that one.",
  ),
  service_unavailable: entry(503, "Service unavailable", "retryable", "A dependency or safe-mode gate is closed; retry with jittered backoff.", {
    retry_after_seconds: 5,
  }),
  master_key_mismatch: entry(
    503,
    "Master key mismatch",
    "fail_fast",
    "The service cannot decrypt its stored secrets (it runs with another master key than its database was made with, e.g. after a restore). Nothing a client changes helps and retrying does not either until the operators fix it: tell them, quoting the request_id. Operators: docs/operations.md, section Restore: the database and its master key.",
    { category: "server" },
  ),
  replay_detected: signed(
    409,
    "Replay detected",
    "retryable",
    "The nonce was already used: sign the retry again with a new nonce and timestamp; keep the Idempotency-Key if it is the same logical request, so it cannot take effect twice.",
  ),
  idempotency_replay: idempotency(
    409,
    "Idempotent replay",
    "safe_noop",
    "The original request with this Idempotency-Key already completed; treat as a duplicate success and fetch the latest state.",
  ),
  idempotency_key_required: idempotency(
    400,
    "Idempotency-Key missing or malformed",
    "fix_and_retry",
    "Send an Idempotency-Key header (1–255 visible ASCII characters, e.g. a UUID) on every mutation.",
  ),
  idempotency_key_reused: idempotency(
    422,
    "Idempotency-Key reused with another payload",
    "fail_fast",
    "An Idempotency-Key belongs to one request; use a new key for a different payload.",
  ),
  idempotency_in_progress: idempotency(
    409,
    "Original request still in progress",
    "retry_after",
    "The first request with this Idempotency-Key has not finished; retry after Retry-After seconds with the same key.",
    { retry_after_seconds: 1 },
  ),
  claim_already_redeemed: entry(
    409,
    "Claim already redeemed",
    "fail_fast",
    "This donation claim was redeemed before (details.redeemed_at); do not retry — fetch the claim with GET /api/partner/donation-claims/{claim_code}.",
    { endpoint_groups: ["partner"] },
  ),
  insufficient_balance: entry(
    409,
    "Insufficient balance",
    "fail_fast",
    "The debit would take the balance below zero (details.balance, details.requested); read the balance and debit at most that.",
    { endpoint_groups: ["salutes", "sandbox"] },
  ),
  conversion_disabled: entry(
    403,
    "Conversion disabled",
    "fail_fast",
    "Salutes conversion is switched off on this service; GET /api/salutes/conversion-policy shows when it is enabled.",
    { endpoint_groups: ["salutes"] },
  ),
  conversion_limit_exceeded: entry(
    409,
    "Daily conversion limit exceeded",
    "fix_and_retry",
    "The user's per-UTC-day conversion cap would be passed; convert at most details.remaining_today, or wait for 00:00 UTC.",
    { endpoint_groups: ["salutes"] },
  ),
  external_id_taken: partnerUsers(
    409,
    "external_id already used",
    "fail_fast",
    "You already have a user with this external_id; fetch it with GET /api/partner/user-lookup?q=… instead of creating it again.",
  ),
  username_taken: partnerUsers(
    409,
    "Username taken",
    "fix_and_retry",
    "Another of your users has this username (compared case-insensitively); choose another.",
  ),
  wallet_already_linked: partnerUsers(
    409,
    "Wallet linked to another user",
    "fail_fast",
    "The address belongs to another of your users; find them with GET /api/partner/user-lookup?wallet=… and decide which user should own it.",
  ),
  // Audio-share (src/audio-share/catalogs.ts documents when each is answered; /api/public/audio-share-links/errors.json).
  destination_host_denied: audioShare(
    400,
    "Destination host denied",
    "fix_and_retry",
    "The destination's host, scheme or form fails the audio-share host policy (details.host, details.reason); share a URL on an allowed host — see /api/public/audio-share-links/policy.json.",
  ),
  destination_invalid: audioShare(
    400,
    "Destination invalid",
    "fix_and_retry",
    "track_url or file_url is not a URL Herald can share: give an absolute https URL or a site-relative path starting with /.",
  ),
  channel_unknown: audioShare(
    400,
    "Unknown share channel",
    "fix_and_retry",
    "A channel in `channels` is not in /api/public/audio-share-links/channels.json; drop it or fix its spelling.",
  ),
  short_url_invalid: audioShare(
    400,
    "Not a short link of this service",
    "fix_and_retry",
    "short_url must be {base_url}/s/audio/<code> (or the path /s/audio/<code>).",
  ),
  short_link_not_found: audioShare(404, "Short link not found", "fail_fast", "No short link has this code; check it, or build a new one."),
  short_link_expired: audioShare(410, "Short link expired", "fail_fast", "The link's expires_at has passed; build a new link."),
  short_link_revoked: audioShare(410, "Short link revoked", "fail_fast", "An operator revoked this link; do not share it again."),
  download_token_used: admin(410, "Download token already used", "fail_fast", "A download token works once; ask the export for a new one (download_token=1)."),
  download_token_expired: admin(
    410,
    "Download token expired",
    "fail_fast",
    "Download tokens expire 10 minutes after they are issued; ask the export for a new one (download_token=1).",
  ),
  short_link_signature_invalid: audioShare(
    403,
    "Short link signature invalid",
    "fail_fast",
    "The token or the stored link does not match its signature (tampered, or the signing key changed); build a new link.",
  ),
  track_auth_required: audioShare(
    401,
    "Track bearer token required",
    "fail_fast",
    "Send Authorization: Bearer <track token>; X-Audio-Share-Track-Auth says required_missing_bearer.",
  ),
  track_auth_invalid: audioShare(401, "Track bearer token invalid", "fail_fast", "The bearer token is unknown or revoked; ask the operators for a new one."),
  run_not_found: entry(
    404,
    "Audit run not found",
    "fail_fast",
    "No audit run matches the selector (a run id, latest, previous, or a UTC date YYYY-MM-DD for the last complete run of that day); list the runs with GET /transparency/audit-anomalies/runs.json.",
    { endpoint_groups: ["transparency"] },
  ),
  ...MESSENGER_ERRORS,
  ...MESSENGER_ADMIN_ERRORS,
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CATALOG, code);
}

export interface ProblemDetail {
  field: string;
  problem: string;
}

/**
 * The one error type handlers and verbs throw. `message` is shown to the caller; `internal` goes only to our
 * logs (so a message never leaks SQL, stack or another partner's data).
 */
export class AppError extends Error {
  readonly status: number;
  readonly details?: ProblemDetail[] | Record<string, unknown>;
  readonly headers?: Record<string, string>;
  readonly extra?: Record<string, unknown>;
  readonly internal?: string;
  readonly quiet?: boolean;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: {
      details?: ProblemDetail[] | Record<string, unknown>;
      headers?: Record<string, string>;
      /** Extra top-level fields of the error body (e.g. original_response of an idempotent replay). */
      extra?: Record<string, unknown>;
      internal?: string;
      /** A 5xx that is an answer, not a failure (a probe saying "not ready"): not logged as a failed request. */
      quiet?: boolean;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = ERROR_CATALOG[code].http_status;
    this.details = options.details;
    this.headers = options.headers;
    this.extra = options.extra;
    this.internal = options.internal;
    this.quiet = options.quiet;
  }
}

/** A probe's 503 (not ready, degraded): `service_unavailable` with the probe's own fields beside it, not logged as a failure. */
export class ProbeUnavailable extends AppError {
  constructor(message: string, fields: object) {
    super("service_unavailable", message, { extra: { ...fields }, quiet: true });
  }
}

export class NotFoundError extends AppError {
  constructor(entity: string, id: string | number) {
    super("not_found", `${entity} ${JSON.stringify(String(id))} was not found`);
  }
}

/** `value` when there is one, else the 404 that names what was asked for. */
export function found<T>(value: T | null | undefined, entity: string, id: string | number): T {
  if (value === null || value === undefined) throw new NotFoundError(entity, id);
  return value;
}

export class ValidationError extends AppError {
  constructor(message: string, details: ProblemDetail[] = []) {
    super("invalid_payload", message, { details });
  }
}

/** A 400 naming each problem in its message too, so a client that reads only the message still learns every one. */
const invalid = (code: "invalid_payload" | "invalid_query", what: string, details: ProblemDetail[]) =>
  new AppError(code, `Invalid ${what}: ${details.map((d) => `${d.field} ${d.problem}`).join("; ")}`, { details });

/** The 400 of a request's body (invalid_payload) or parameters (invalid_query). */
export const invalidRequest = (part: "body" | "parameters", details: ProblemDetail[]) =>
  invalid(part === "body" ? "invalid_payload" : "invalid_query", `request ${part}`, details);

/** A verb's own checks after the schema's: the 400 for `what` (`Invalid webhook: …`) when any found a problem. */
export function problemsOrThrow(what: string, problems: ProblemDetail[], code: "invalid_payload" | "invalid_query" = "invalid_payload"): void {
  if (problems.length) throw invalid(code, what, problems);
}

/**
 * A query parameter a route refuses by its own check (after the schema's): 400 invalid_query named and worded as
 * the schema's refusals are (`query.<name> <problem>`), so a client reads one shape whichever check refused it.
 */
export const queryProblem = (name: string, problem: string) => invalidRequest("parameters", [{ field: `query.${name}`, problem }]);
