// The ONE error catalog. Every error Herald answers with is an AppError carrying one of these codes; the
// catalog also serves /api/partner/errors.json and /developers/api-errors.json, so docs and behaviour agree.

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
}

const BOTH = ["live", "sandbox"] as const;
const ALL_GROUPS = ["partner", "sandbox", "salutes", "public", "transparency", "audio-share", "messenger", "admin"] as const;

const entry = (
  http_status: number,
  title: string,
  category: ErrorCategory,
  retry_class: RetryClass,
  retry_behavior: string,
  extra: Partial<CatalogEntry> = {},
): CatalogEntry => ({
  http_status,
  title,
  category,
  retry_class,
  retry_behavior,
  retry_after_seconds: 0,
  available_in_modes: BOTH,
  endpoint_groups: ALL_GROUPS,
  ...extra,
});

export const ERROR_CATALOG = {
  invalid_payload: entry(400, "Invalid payload", "validation", "fix_and_retry", "Fix the fields named in details and send again."),
  invalid_query: entry(400, "Invalid query parameter", "validation", "fix_and_retry", "Fix the query parameters named in details and send again."),
  unauthorized: entry(401, "Unauthorized", "authentication", "fail_fast", "Check the key id, secret, timestamp and signature inputs; do not retry unchanged."),
  forbidden: entry(
    403,
    "Forbidden",
    "authorization",
    "fail_fast",
    "The credential lacks a scope, is disabled, is used from a disallowed IP or in the wrong mode; use the right key or request an upgrade.",
  ),
  not_found: entry(404, "Not found", "not_found", "fail_fast", "Check the path and the id; objects of other partners are reported as not found."),
  method_not_allowed: entry(405, "Method not allowed", "validation", "fail_fast", "Use one of the methods listed in the Allow header."),
  conflict: entry(409, "Conflict", "conflict", "fail_fast", "The request conflicts with the current state; fetch the latest state before deciding."),
  payload_too_large: entry(413, "Payload too large", "validation", "fix_and_retry", "Send a smaller body; the limit is in the message."),
  uri_too_long: entry(
    414,
    "Request target too long",
    "validation",
    "fix_and_retry",
    "Shorten the path and query string (8,192 characters at most); send large inputs in a JSON body.",
  ),
  unsupported_media_type: entry(415, "Unsupported media type", "validation", "fix_and_retry", "Send the body as application/json."),
  rate_limited: entry(429, "Rate limited", "throttling", "retry_after", "Back off; honour Retry-After and X-RateLimit-Reset before the next request.", {
    retry_after_seconds: 60,
  }),
  server_error: entry(
    500,
    "Server error",
    "server",
    "retryable",
    "Retry with capped exponential backoff; quote the request_id to the operators if it persists.",
    { retry_after_seconds: 1 },
  ),
  db_unavailable: entry(503, "Database unavailable", "dependency", "retryable", "Retry with jittered backoff (1, 2, 4, 8 s, capped at 30 s).", {
    retry_after_seconds: 2,
  }),
  service_unavailable: entry(503, "Service unavailable", "dependency", "retryable", "A dependency or safe-mode gate is closed; retry with jittered backoff.", {
    retry_after_seconds: 5,
  }),
  replay_detected: entry(
    409,
    "Replay detected",
    "conflict",
    "retryable",
    "The nonce was already used: sign the retry again with a new nonce and timestamp; keep the Idempotency-Key if it is the same logical request, so it cannot take effect twice.",
    { endpoint_groups: ["partner", "sandbox", "salutes"] },
  ),
  idempotency_replay: entry(
    409,
    "Idempotent replay",
    "idempotency",
    "safe_noop",
    "The original request with this Idempotency-Key already completed; treat as a duplicate success and fetch the latest state.",
    { endpoint_groups: ["partner", "sandbox", "salutes"] },
  ),
  idempotency_key_required: entry(
    400,
    "Idempotency-Key missing or malformed",
    "idempotency",
    "fix_and_retry",
    "Send an Idempotency-Key header (1–255 visible ASCII characters, e.g. a UUID) on every mutation.",
    { endpoint_groups: ["partner", "sandbox", "salutes"] },
  ),
  idempotency_key_reused: entry(
    422,
    "Idempotency-Key reused with another payload",
    "idempotency",
    "fail_fast",
    "An Idempotency-Key belongs to one request; use a new key for a different payload.",
    { endpoint_groups: ["partner", "sandbox", "salutes"] },
  ),
  idempotency_in_progress: entry(
    409,
    "Original request still in progress",
    "idempotency",
    "retry_after",
    "The first request with this Idempotency-Key has not finished; retry after Retry-After seconds with the same key.",
    { retry_after_seconds: 1, endpoint_groups: ["partner", "sandbox", "salutes"] },
  ),
  claim_already_redeemed: entry(
    409,
    "Claim already redeemed",
    "conflict",
    "fail_fast",
    "This donation claim was redeemed before (details.redeemed_at); do not retry — fetch the claim with GET /api/partner/donation-claims/{claim_code}.",
    { endpoint_groups: ["partner"] },
  ),
  insufficient_balance: entry(
    409,
    "Insufficient balance",
    "conflict",
    "fail_fast",
    "The debit would take the balance below zero (details.balance, details.requested); read the balance and debit at most that.",
    { endpoint_groups: ["salutes", "sandbox"] },
  ),
  conversion_disabled: entry(
    403,
    "Conversion disabled",
    "authorization",
    "fail_fast",
    "Salutes conversion is switched off on this service; GET /api/salutes/conversion-policy shows when it is enabled.",
    { endpoint_groups: ["salutes"] },
  ),
  conversion_limit_exceeded: entry(
    409,
    "Daily conversion limit exceeded",
    "conflict",
    "fix_and_retry",
    "The user's per-UTC-day conversion cap would be passed; convert at most details.remaining_today, or wait for 00:00 UTC.",
    { endpoint_groups: ["salutes"] },
  ),
  external_id_taken: entry(
    409,
    "external_id already used",
    "conflict",
    "fail_fast",
    "You already have a user with this external_id; fetch it with GET /api/partner/user-lookup?q=… instead of creating it again.",
    { endpoint_groups: ["partner", "sandbox"] },
  ),
  username_taken: entry(
    409,
    "Username taken",
    "conflict",
    "fix_and_retry",
    "Another of your users has this username (compared case-insensitively); choose another.",
    { endpoint_groups: ["partner", "sandbox"] },
  ),
  wallet_already_linked: entry(
    409,
    "Wallet linked to another user",
    "conflict",
    "fail_fast",
    "The address belongs to another of your users; find them with GET /api/partner/user-lookup?wallet=… and decide which user should own it.",
    { endpoint_groups: ["partner", "sandbox"] },
  ),
  // Audio-share (src/audio-share/catalogs.ts documents when each is answered; /api/public/audio-share-links/errors.json).
  destination_host_denied: entry(
    400,
    "Destination host denied",
    "validation",
    "fix_and_retry",
    "The destination's host, scheme or form fails the audio-share host policy (details.host, details.reason); share a URL on an allowed host — see /api/public/audio-share-links/policy.json.",
    { endpoint_groups: ["audio-share"] },
  ),
  destination_invalid: entry(
    400,
    "Destination invalid",
    "validation",
    "fix_and_retry",
    "track_url or file_url is not a URL Herald can share: give an absolute https URL or a site-relative path starting with /.",
    { endpoint_groups: ["audio-share"] },
  ),
  channel_unknown: entry(
    400,
    "Unknown share channel",
    "validation",
    "fix_and_retry",
    "A channel in `channels` is not in /api/public/audio-share-links/channels.json; drop it or fix its spelling.",
    { endpoint_groups: ["audio-share"] },
  ),
  short_url_invalid: entry(
    400,
    "Not a short link of this service",
    "validation",
    "fix_and_retry",
    "short_url must be {base_url}/s/audio/<code> (or the path /s/audio/<code>).",
    { endpoint_groups: ["audio-share"] },
  ),
  short_link_not_found: entry(404, "Short link not found", "not_found", "fail_fast", "No short link has this code; check it, or build a new one.", {
    endpoint_groups: ["audio-share"],
  }),
  short_link_expired: entry(410, "Short link expired", "not_found", "fail_fast", "The link's expires_at has passed; build a new link.", {
    endpoint_groups: ["audio-share"],
  }),
  short_link_revoked: entry(410, "Short link revoked", "not_found", "fail_fast", "An operator revoked this link; do not share it again.", {
    endpoint_groups: ["audio-share"],
  }),
  short_link_signature_invalid: entry(
    403,
    "Short link signature invalid",
    "authorization",
    "fail_fast",
    "The token or the stored link does not match its signature (tampered, or the signing key changed); build a new link.",
    { endpoint_groups: ["audio-share"] },
  ),
  track_auth_required: entry(
    401,
    "Track bearer token required",
    "authentication",
    "fail_fast",
    "Send Authorization: Bearer <track token>; X-Audio-Share-Track-Auth says required_missing_bearer.",
    { endpoint_groups: ["audio-share"] },
  ),
  track_auth_invalid: entry(
    401,
    "Track bearer token invalid",
    "authentication",
    "fail_fast",
    "The bearer token is unknown or revoked; ask the operators for a new one.",
    { endpoint_groups: ["audio-share"] },
  ),
  run_not_found: entry(
    404,
    "Audit run not found",
    "not_found",
    "fail_fast",
    "No audit run matches the selector (a run id, latest, previous, or a UTC date YYYY-MM-DD for the last complete run of that day); list the runs with GET /transparency/audit-anomalies/runs.json.",
    { endpoint_groups: ["transparency"] },
  ),
  // Messenger mini-app (src/messenger; docs/messenger.md): init-data identity, bot webhook, games, promos, missions, wallet proof.
  messenger_not_configured: entry(
    503,
    "Messenger not configured",
    "dependency",
    "fail_fast",
    "MESSENGER_BOT_TOKEN is not set on this service, so no init data can be checked; the operator sets it (README configuration table).",
    { endpoint_groups: ["messenger"] },
  ),
  init_data_missing: entry(
    401,
    "Init data missing",
    "authentication",
    "fix_and_retry",
    "Send Telegram's raw init data (window.Telegram.WebApp.initData) as `Authorization: tma <init data>`, the init_data query parameter or the init_data body field.",
    { endpoint_groups: ["messenger"] },
  ),
  init_data_malformed: entry(
    401,
    "Init data malformed",
    "authentication",
    "fix_and_retry",
    "Send initData exactly as Telegram gave it (a URL-encoded query string with auth_date, user and hash, no key twice); do not decode or re-serialise it.",
    { endpoint_groups: ["messenger"] },
  ),
  init_data_signature_invalid: entry(
    401,
    "Init data signature invalid",
    "authentication",
    "fail_fast",
    "The hash (or Ed25519 signature) does not match: the data was changed, or it was signed for another bot; reopen the mini-app from this bot.",
    { endpoint_groups: ["messenger"] },
  ),
  init_data_expired: entry(
    401,
    "Init data expired",
    "authentication",
    "fix_and_retry",
    "auth_date is older than MESSENGER_INIT_DATA_MAX_AGE_SECONDS (details.max_age_seconds); reopen the mini-app to get fresh init data.",
    { endpoint_groups: ["messenger"] },
  ),
  webhook_secret_invalid: entry(
    401,
    "Webhook secret token invalid",
    "authentication",
    "fail_fast",
    "X-Messenger-Bot-Api-Secret-Token must equal MESSENGER_WEBHOOK_SECRET (set it with setWebhook's secret_token).",
    { endpoint_groups: ["messenger"] },
  ),
  game_not_found: entry(
    404,
    "Game or item not found",
    "not_found",
    "fail_fast",
    "The game_key or item_key is not in GET /api/messenger/games/catalog for this player.",
    { endpoint_groups: ["messenger"] },
  ),
  game_balance_insufficient: entry(
    409,
    "Game balance insufficient",
    "conflict",
    "fail_fast",
    "The play or purchase needs more free spins, missiles or points than the player has (details.balance, details.required); buy or earn more first.",
    { endpoint_groups: ["messenger"] },
  ),
  game_cooldown: entry(
    409,
    "Game on cooldown",
    "conflict",
    "retry_after",
    "The free play is on cooldown; retry after details.available_at (Retry-After), or use a bought play.",
    { endpoint_groups: ["messenger"] },
  ),
  game_state_conflict: entry(
    409,
    "Game state conflict",
    "conflict",
    "fix_and_retry",
    "The game is not in a state that allows this (no active grid, cell already revealed); read the status route and act on it.",
    { endpoint_groups: ["messenger"] },
  ),
  promo_not_found: entry(
    404,
    "Promo code not found",
    "not_found",
    "fail_fast",
    "No enabled promo has this code; check its spelling (codes are case-sensitive).",
    { endpoint_groups: ["messenger"] },
  ),
  promo_expired: entry(410, "Promo code expired", "not_found", "fail_fast", "The promo's expires_at has passed; it cannot be claimed any more.", {
    endpoint_groups: ["messenger"],
  }),
  promo_exhausted: entry(409, "Promo code used up", "conflict", "fail_fast", "Every claim the promo allows (max_claims) has been made.", {
    endpoint_groups: ["messenger"],
  }),
  promo_already_claimed: entry(
    409,
    "Promo already claimed",
    "conflict",
    "safe_noop",
    "This player claimed this promo before; each player may claim a code once.",
    { endpoint_groups: ["messenger"] },
  ),
  promo_not_eligible: entry(
    403,
    "Not eligible for this promo",
    "authorization",
    "fail_fast",
    "The promo is limited to an audience group (details.audience_group) this player is not in.",
    { endpoint_groups: ["messenger"] },
  ),
  mission_not_found: entry(
    404,
    "Mission not found",
    "not_found",
    "fail_fast",
    "No active mission has this mission_key; list them with POST /api/messenger/missions/catalog.",
    { endpoint_groups: ["messenger"] },
  ),
  mission_not_enrolled: entry(
    409,
    "Not enrolled in the mission",
    "conflict",
    "fix_and_retry",
    "Enroll first with POST /api/messenger/missions/enroll, then report progress.",
    { endpoint_groups: ["messenger"] },
  ),
  wallet_nonce_unknown: entry(
    404,
    "Wallet challenge not found",
    "not_found",
    "fix_and_retry",
    "The nonce was not issued to this player; request a new challenge with POST /api/messenger/wallet-proof/challenge.",
    { endpoint_groups: ["messenger"] },
  ),
  wallet_nonce_used: entry(
    409,
    "Wallet challenge already used",
    "conflict",
    "fix_and_retry",
    "Each challenge proves one wallet once; request a new challenge and sign its message.",
    { endpoint_groups: ["messenger"] },
  ),
  wallet_nonce_expired: entry(
    410,
    "Wallet challenge expired",
    "not_found",
    "fix_and_retry",
    "The challenge's expiration time has passed; request a new one and sign it promptly.",
    { endpoint_groups: ["messenger"] },
  ),
  wallet_message_mismatch: entry(
    400,
    "Signed message does not match the challenge",
    "validation",
    "fix_and_retry",
    "Sign exactly the message the challenge returned (byte for byte, including line breaks), and send it back unchanged.",
    { endpoint_groups: ["messenger"] },
  ),
  wallet_signature_invalid: entry(
    401,
    "Wallet signature invalid",
    "authentication",
    "fix_and_retry",
    "The Ed25519 signature does not verify for this message and the claimed address: sign with the wallet whose address you claim.",
    { endpoint_groups: ["messenger"] },
  ),
  request_id_reused: entry(
    422,
    "Client request id reused",
    "idempotency",
    "fail_fast",
    "This request_id was used for a different action or payload; use a new request_id for a new action.",
    { endpoint_groups: ["messenger"] },
  ),
  promotion_not_ready: entry(
    409,
    "Promotion not ready",
    "conflict",
    "fix_and_retry",
    "The partner's sandbox promotion report does not pass (details carries the report and its checklist); finish the failing items, or an operator promotes with force=true and a reason.",
    { endpoint_groups: ["admin", "sandbox"] },
  ),
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

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: {
      details?: ProblemDetail[] | Record<string, unknown>;
      headers?: Record<string, string>;
      /** Extra top-level fields of the error body (e.g. original_response of an idempotent replay). */
      extra?: Record<string, unknown>;
      internal?: string;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = ERROR_CATALOG[code].http_status;
    this.details = options.details;
    this.headers = options.headers;
    this.extra = options.extra;
    this.internal = options.internal;
  }
}

export class NotFoundError extends AppError {
  constructor(entity: string, id: string | number) {
    super("not_found", `${entity} ${JSON.stringify(String(id))} was not found`);
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details: ProblemDetail[] = []) {
    super("invalid_payload", message, { details });
  }
}
