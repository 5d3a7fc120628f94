import type { AppContext } from "../context";
import { ERROR_CATALOG, type ErrorCode } from "../http/errors/errors";
import { BATCH_MAX_ITEMS, EXPIRES_IN_MAX_SECONDS, EXPIRES_IN_MIN_SECONDS, type Finding as FindingSchema, TRACK_EVENT_TYPES } from "./model";

// The audio-share catalogs: errors.json, warnings.json and guidance.json. Routes and verbs name errors and
// warnings only through these tables; each error's status, title and retry class come from the main catalog
// (src/http/errors/errors.ts), so the two can never disagree.

interface AudioShareErrorDoc {
  when: string;
  routes: readonly string[];
}

const BASE = "/api/public/audio-share-links";
const ALL = ["*"] as const;

/** Every error an audio-share route can answer, and when. */
export const AUDIO_SHARE_ERRORS = {
  destination_host_denied: {
    when: "The destination fails the host policy: host not allowed or denied, IP literal, user info, trailing dot, non-http(s) scheme (javascript:, data: …), protocol-relative //host, or a redirect parameter pointing off-policy. details.host names the host, details.reason says which rule.",
    routes: [BASE, `${BASE}/track`],
  },
  destination_invalid: {
    when: "Neither track_url nor file_url was given, or the one used (or destination_url) is empty, too long, has control characters, or is neither an absolute URL nor a path starting with /.",
    routes: [BASE, `${BASE}/track`],
  },
  channel_unknown: {
    when: "A name in `channels` is not a channel id or alias from channels.json (details.unknown lists them).",
    routes: [BASE, `${BASE}/preview`],
  },
  short_url_invalid: { when: "short_url is not {base_url}/s/audio/<code> (another host, another path, or a malformed code).", routes: [`${BASE}/expand`] },
  short_link_not_found: {
    when: "No link has this code.",
    routes: [`${BASE}/expand`, `${BASE}/short/resolve`, `${BASE}/stats`, `${BASE}/track`, "/s/audio/{code}", "/admin/ops/audio-share-revocations/revoke"],
  },
  short_link_expired: { when: "The link's expires_at has passed: it never redirects again.", routes: [`${BASE}/short/resolve`, "/s/audio/{code}"] },
  short_link_revoked: { when: "An operator revoked the link: it never redirects again.", routes: [`${BASE}/short/resolve`, "/s/audio/{code}"] },
  short_link_signature_invalid: {
    when: "The token sent to /short/resolve does not match the link (edited expiry or signature), or a signed link's stored row no longer matches its signature.",
    routes: [`${BASE}/short/resolve`, "/s/audio/{code}"],
  },
  track_auth_required: {
    when: "AUDIO_SHARE_TRACK_AUTH=required and no bearer token was sent (X-Audio-Share-Track-Auth: required_missing_bearer).",
    routes: [`${BASE}/track`],
  },
  track_auth_invalid: {
    when: "AUDIO_SHARE_TRACK_AUTH is optional or required and the Authorization header is not a known, unrevoked bearer token (X-Audio-Share-Track-Auth: required_invalid_bearer).",
    routes: [`${BASE}/track`],
  },
  invalid_query: {
    when: "A query parameter has the wrong type or range (expires_in outside 60 … 2592000, use_short not a flag (1, true, 0, false or bare), a missing track_url …).",
    routes: ALL,
  },
  invalid_payload: { when: "A JSON body is malformed, misses a field, has a wrong type or an unknown field.", routes: ALL },
  payload_too_large: { when: "The body exceeds MAX_BODY_BYTES.", routes: ALL },
  request_timeout: {
    when: "The body arrived slower than REQUEST_BODY_TIMEOUT_MS or REQUEST_BODY_MIN_BYTES_PER_SEC allow; the connection is closed.",
    routes: ALL,
  },
  unsupported_media_type: { when: "A POST body is not application/json.", routes: ALL },
  rate_limited: {
    when: "More than RATE_LIMIT_PUBLIC_API_PER_MIN requests per minute from one IP (audio-share routes and /s/audio share the public budget).",
    routes: ALL,
  },
  forbidden: {
    when: "An operator route without a valid admin token.",
    routes: ["/admin/ops/audio-share-revocations/revoke", "/admin/audio-share/track-tokens"],
  },
  not_found: { when: "An operator route names a track token id that does not exist.", routes: ["/admin/audio-share/track-tokens/{token_id}/revoke"] },
  method_not_allowed: { when: "A known path with the wrong method (the Allow header lists the right ones).", routes: ALL },
  service_unavailable: {
    when: "GET /health when the links table cannot be read: the health fields are in the answer beside the error (status degraded).",
    routes: [`${BASE}/health`],
  },
  server_error: { when: "A bug; quote the request_id.", routes: ALL },
} as const satisfies Partial<Record<ErrorCode, AudioShareErrorDoc>>;

export type AudioShareErrorCode = keyof typeof AUDIO_SHARE_ERRORS;

/** Non-fatal findings: the link is built, but the caller may want to act. */
export const AUDIO_SHARE_WARNINGS = {
  insecure_scheme: {
    title: "Destination uses http",
    when: "The destination is http while the service is served over https.",
    client_action: "Share the https URL of the page.",
  },
  redirect_param_present: {
    title: "Destination carries a redirect",
    when: "A redirect-like parameter (next=, url=, redirect= …) points at another allowed URL.",
    client_action: "Share the final page directly; readers otherwise pass through a second page.",
  },
  embedded_url_param: {
    title: "Destination carries another URL",
    when: "A parameter that is not redirect-like holds a URL (passed through unchanged).",
    client_action: "Drop the parameter unless the page needs it.",
  },
  text_truncated: {
    title: "Message shortened for a channel",
    when: "text (or title) plus the link exceeds the channel's max_message_length; the text was cut on a word boundary with …",
    client_action: "Send a shorter text, or accept the cut.",
  },
  text_not_supported: {
    title: "Channel ignores text",
    when: "text was given but the channel's share intent only takes a link (capabilities.text = false).",
    client_action: "None; the channel shows the page's own preview card.",
  },
  signed_implies_short: {
    title: "Signed link made short",
    when: "token_mode=signed without use_short=1: only short links are signed, so a short link was built.",
    client_action: "Send use_short=1 with token_mode=signed.",
  },
  expires_in_ignored: {
    title: "expires_in ignored",
    when: "expires_in without use_short=1 or token_mode=signed: plain share URLs do not expire.",
    client_action: "Add use_short=1 to get an expiring link.",
  },
  prefer_file_without_file_url: {
    title: "prefer=file without file_url",
    when: "prefer=file was asked but no file_url was given; track_url was shared.",
    client_action: "Send file_url, or drop prefer.",
  },
  file_url_ignored: {
    title: "file_url ignored",
    when: "Both track_url and file_url were given without prefer=file; the track page was shared.",
    client_action: "Send prefer=file to share the audio file instead.",
  },
} as const satisfies Record<string, { title: string; when: string; client_action: string }>;

export type AudioShareWarningCode = keyof typeof AUDIO_SHARE_WARNINGS;

export type Finding = Omit<typeof FindingSchema.static, "code"> & { code: AudioShareErrorCode | AudioShareWarningCode };

export const warningOf = (code: AudioShareWarningCode, message: string, extra: Partial<Finding> = {}): Finding => ({ code, message, ...extra });

/** errors.json */
export function errorsCatalog() {
  const errors = (Object.entries(AUDIO_SHARE_ERRORS) as Array<[AudioShareErrorCode, AudioShareErrorDoc]>).map(([code, doc]) => {
    const e = ERROR_CATALOG[code];
    return {
      code,
      http_status: e.http_status,
      title: e.title,
      retry_class: e.retry_class,
      client_action: e.retry_behavior,
      status_rationale: e.status_rationale,
      when: doc.when,
      routes: [...doc.routes],
    };
  });
  return { count: errors.length, errors, by_code: Object.fromEntries(errors.map((e) => [e.code, e])) };
}

/** warnings.json */
export function warningsCatalog() {
  const warnings = (Object.entries(AUDIO_SHARE_WARNINGS) as Array<[AudioShareWarningCode, (typeof AUDIO_SHARE_WARNINGS)[AudioShareWarningCode]]>).map(
    ([code, w]) => ({ code, ...w }),
  );
  return { count: warnings.length, warnings, by_code: Object.fromEntries(warnings.map((w) => [w.code, w])) };
}

/** The bounds of a short link's expires_in, and its default here (policy.json and guidance.json). */
export const expiresInLimits = (ctx: AppContext) => ({
  min_seconds: EXPIRES_IN_MIN_SECONDS,
  max_seconds: EXPIRES_IN_MAX_SECONDS,
  default_seconds: ctx.config.audioShare.defaultExpiresSeconds,
});
export const TRACK_AUTH_HEADER = "X-Audio-Share-Track-Auth";
export const CHECKSUM_HEADER = "X-Audio-Share-Checksum";

/**
 * Every value of X-Audio-Share-Track-Auth, the spec's four: `optional` when no bearer is needed and none was judged
 * (mode optional without Authorization, or mode off, which ignores it), else what the bearer was. In optional mode a
 * bearer, once sent, must be valid, so it is judged as in required mode: one value is never sent for an accepted and
 * a refused request.
 */
export const TRACK_AUTH_VALUES = {
  optional: "mode optional without Authorization, or mode off (Authorization ignored): accepted, anonymous",
  required_missing_bearer: "mode required, no Authorization sent: 401 track_auth_required",
  required_invalid_bearer: "mode required, or mode optional with Authorization sent: a bearer that is unknown, revoked or malformed: 401 track_auth_invalid",
  required_valid_bearer: "mode required, or mode optional with Authorization sent: a valid bearer: accepted, attributed to the token",
} as const;

export type TrackAuthHeader = keyof typeof TRACK_AUTH_VALUES;

/** guidance.json: the order to call things in, and the limits in force. */
export function guidanceCatalog(ctx: AppContext) {
  const c = ctx.config.audioShare;
  return {
    discovery_order: [`${BASE}/channels.json`, `${BASE}/policy.json`, `${BASE}/errors.json`, `${BASE}/warnings.json`, `${BASE}/health`],
    flows: [
      {
        name: "share a track page",
        steps: [
          `GET ${BASE}/validate?track_url=/tracks/42&channels=x,telegram`,
          `GET ${BASE}?track_url=/tracks/42&title=…&channels=x,telegram`,
          "open share_urls[channel] in the reader's browser or app",
        ],
      },
      {
        name: "signed short link",
        steps: [
          `GET ${BASE}?track_url=…&token_mode=signed&use_short=1&expires_in=900`,
          "share short_url; keep token to prove the link later",
          `POST ${BASE}/short/resolve {"code": token}`,
          `GET ${BASE}/expand?short_url=…`,
        ],
      },
      {
        name: "count shares",
        steps: [
          `POST ${BASE}/track {"event_type":"copy","destination_url":…,"client_event_id":<uuid>}`,
          "retry with the SAME client_event_id: a repeat inside the window answers replay_reason=in_window_duplicate",
          `GET ${BASE}/stats?code=…`,
        ],
      },
      {
        name: "withdraw a link (operators)",
        steps: ['POST /admin/ops/audio-share-revocations/revoke {"short_code","reason"}', "the link answers 410 at once"],
      },
    ],
    limits: {
      expires_in: expiresInLimits(ctx),
      batch_items_max: BATCH_MAX_ITEMS,
      track_dedupe_seconds: c.trackDedupeSeconds,
      rate_limit_per_minute_per_ip: ctx.config.rateLimits.publicPerMin,
      clicks_unique_per: "client (hash of IP + user agent + daily salt) per link per UTC hour",
    },
    track_auth: {
      mode: c.trackAuth,
      header: TRACK_AUTH_HEADER,
      header_values: TRACK_AUTH_VALUES,
      sent_on:
        "every /track answer once the request reaches the route (200 and each refusal: 400, 401, 404 …); not on a 413 by Content-Length or a 429, which are answered before any route runs and so before auth is looked at",
      tokens: "issued by operators: POST /admin/audio-share/track-tokens",
    },
    checksum: {
      header: CHECKSUM_HEADER,
      definition: "lowercase hex SHA-256 of the exact response body bytes as sent (the JSON text, UTF-8); on every successful JSON answer of these routes",
    },
    event_types: [...TRACK_EVENT_TYPES],
  };
}
