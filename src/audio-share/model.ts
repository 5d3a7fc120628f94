import { t } from "elysia";
import { Envelope, FLAG_VALUES, ignoredMetaQuery, Unavailable } from "../http/envelope";
import { QR_PNG_MAX_SIZE, QR_PNG_MIN_SIZE } from "../http/formats/qr";
import { intPath, intQuery } from "../http/params";
import { named } from "../http/openapi/names";
import { ListAnswer, PageQuery } from "../http/pagination";
import { nullable } from "../http/routes/declare";

export const EXPIRES_IN_MIN_SECONDS = 60;
export const EXPIRES_IN_MAX_SECONDS = 30 * 86_400;
export const BATCH_MAX_ITEMS = 100;
export const TRACK_EVENT_TYPES = ["copy", "share", "open", "click", "play", "download", "qr_scan"] as const;

const source = () => t.Union([t.Literal("track"), t.Literal("file")]);

// Destinations may be longer than the policy's 2048 so that the policy, not the schema, answers (with the
// catalog's destination_invalid and the field named).
const destination = (description: string) => t.String({ maxLength: 8192, description });
const prefer = source();
const channels = t.String({ maxLength: 500, description: "Comma-separated channel ids or aliases from channels.json; default every channel" });
/** In a JSON body the channels may also be an array of the same names. */
const bodyChannels = t.Union([channels, t.Array(t.String({ maxLength: 64 }), { maxItems: 50, description: "channel ids or aliases" })]);
const includeMeta = { include_meta: t.Optional(t.String()) };

export const Finding = named(
  "ShareFinding",
  t.Object({
    code: t.String({ description: "From errors.json or warnings.json" }),
    message: t.String(),
    field: t.Optional(t.String()),
    host: t.Optional(nullable(t.String())),
    reason: t.Optional(t.String()),
    param: t.Optional(t.String()),
    channel: t.Optional(t.String()),
  }),
);

export const Share = named(
  "ChannelShare",
  t.Object({
    channel: t.String(),
    kind: t.String(),
    share_url: t.String(),
    message: t.String(),
    length: t.Integer(),
    limit: nullable(t.Integer()),
    truncated: t.Boolean(),
  }),
);

const Validation = {
  valid: t.Boolean(),
  destination_url: nullable(t.String()),
  host: nullable(t.String()),
  source: source(),
  channels: t.Array(t.String()),
  errors: t.Array(Finding),
  warnings: t.Array(Finding),
};

export const LinkView = t.Object({
  short_code: t.String(),
  short_url: t.String(),
  destination_url: t.String(),
  source: t.String(),
  channel: nullable(t.String()),
  title: nullable(t.String()),
  signed: t.Boolean(),
  signature_valid: t.Boolean(),
  state: t.Union([t.Literal("active"), t.Literal("expired"), t.Literal("revoked")]),
  created_at: t.String(),
  expires_at: t.String(),
  revoked_at: nullable(t.String()),
});

const HitCounts = { clicks: t.Integer(), unique_clicks: t.Integer(), bot_hits: t.Integer(), head_hits: t.Integer() };

const TrackToken = named(
  "TrackToken",
  t.Object({
    id: t.Integer(),
    name: t.String(),
    created_at: t.String(),
    created_by: t.String(),
    last_used_at: nullable(t.String()),
    revoked_at: nullable(t.String()),
  }),
);

export const Channel = named(
  "ShareChannel",
  t.Object({
    id: t.String(),
    label: t.String(),
    kind: t.String(),
    /** Share intent URL; null = the link itself is what is shared (pasted into the app, which unfurls it). */
    template: nullable(t.String()),
    /** Longest message (text + link) the channel accepts, in characters; null = no practical limit. */
    max_message_length: nullable(t.Integer()),
    /** How many characters a link costs in the message (the microblog wraps every link to 23); null = its length. */
    link_length: nullable(t.Integer()),
    capabilities: t.Object({ text: t.Boolean(), title: t.Boolean(), link_preview: t.Boolean(), intent_url: t.Boolean() }),
    aliases: t.Array(t.String()),
  }),
);

const itemFields = {
  track_url: t.Optional(destination("Track page: absolute URL or site-relative path")),
  file_url: t.Optional(destination("Audio file: absolute URL or site-relative path")),
  prefer: t.Optional(prefer),
};
const title = t.Optional(t.String({ maxLength: 300 }));
/** What a share is built or previewed from. */
const shareFields = { ...itemFields, title, text: t.Optional(t.String({ maxLength: 1000 })), channels: t.Optional(channels) };
const requestId = t.String({ description: "this request's id (also X-Request-ID)" });
const shortUrl = t.String({ minLength: 1, maxLength: 2048 });

/** GET /health's fields, in its 200 and in its 503. */
const Health = {
  status: t.Union([t.Literal("ok"), t.Literal("degraded")]),
  database: t.String(),
  signing_key: t.String({ description: "configured (AUDIO_SHARE_SIGNING_KEY) or derived (from the master key)" }),
  track_auth: t.String(),
  policy: t.Object({ allowed_hosts: t.Integer(), denied_hosts: t.Integer() }),
  links: t.Object({
    total: t.Integer({ description: "links stored, counted up to 10,000 (total_capped says there are more)" }),
    active: t.Integer({ description: "links neither revoked nor expired, counted up to 10,000 (active_capped says there are more)" }),
    total_capped: t.Boolean({ description: "true when more than 10,000 links are stored: total is then 10,000, a lower bound" }),
    active_capped: t.Boolean({ description: "true when more than 10,000 links are active: active is then 10,000, a lower bound" }),
  }),
  pending_hit_buckets: t.Integer(),
  checked_at: t.String(),
};

export const AudioShareModel = {
  buildQuery: t.Object({
    ...shareFields,
    token_mode: t.Optional(t.Literal("signed")),
    use_short: t.Optional(
      t.Union(
        FLAG_VALUES.map((v) => t.Literal(v)),
        { description: "1, true or the bare flag: also issue a short link; 0 or false: none" },
      ),
    ),
    expires_in: intQuery({ minimum: EXPIRES_IN_MIN_SECONDS, maximum: EXPIRES_IN_MAX_SECONDS, description: "seconds until a short link expires" }),
    ...includeMeta,
  }),
  built: Envelope({
    destination_url: t.String(),
    source: source(),
    title: nullable(t.String()),
    text: nullable(t.String()),
    channels: t.Array(t.String()),
    share_urls: t.Record(t.String(), t.String(), { description: "channel id → share URL" }),
    shares: t.Array(Share),
    short_url: nullable(t.String()),
    short_code: nullable(t.String()),
    signed: t.Boolean(),
    expires_at: nullable(t.String()),
    token: nullable(t.String({ description: "Signed links: code.expires.signature, for POST /short/resolve" })),
    warnings: t.Array(Finding),
  }),
  validateQuery: t.Object({ ...itemFields, channels: t.Optional(channels), ...includeMeta }),
  validated: Envelope({ ...Validation, request_id: requestId }),
  batchBody: t.Object(
    {
      defaults: t.Optional(t.Object({ channels: t.Optional(bodyChannels), prefer: t.Optional(prefer) }, { additionalProperties: false })),
      items: t.Array(t.Object({ ...itemFields, title, channels: t.Optional(bodyChannels) }, { additionalProperties: false }), {
        minItems: 1,
        maxItems: BATCH_MAX_ITEMS,
      }),
    },
    { additionalProperties: false },
  ),
  batch: Envelope({
    count: t.Integer(),
    valid_count: t.Integer(),
    invalid_count: t.Integer(),
    results: t.Array(t.Object({ index: t.Integer(), ...Validation })),
    request_id: requestId,
  }),
  previewQuery: t.Object({ ...shareFields, ...includeMeta }),
  preview: Envelope({
    destination_url: t.String(),
    source: source(),
    card: t.Object({ url: t.String(), host: t.String(), title: nullable(t.String()), description: nullable(t.String()) }),
    shares: t.Array(Share),
    warnings: t.Array(Finding),
  }),
  expandQuery: t.Object({ short_url: shortUrl, ...includeMeta }),
  expandBody: t.Object({ short_url: shortUrl }, { additionalProperties: false }),
  link: named("ShareLink", Envelope(LinkView.properties)),
  resolveBody: t.Object(
    { code: t.String({ minLength: 1, maxLength: 200, description: "The short code, or the signed token code.expires.signature" }) },
    { additionalProperties: false },
  ),
  resolved: Envelope({ ...LinkView.properties, token_verified: t.Boolean(), expires_in_seconds: t.Integer() }),
  trackBody: t.Object(
    {
      event_type: t.Union(
        TRACK_EVENT_TYPES.map((e) => t.Literal(e)),
        { description: TRACK_EVENT_TYPES.join(", ") },
      ),
      destination_url: destination("The URL that was shared (a short URL of this service counts for its link)"),
      client_event_id: t.String({
        pattern: "^[\\x21-\\x7e]{1,128}$",
        description: "Your id for this event: 1–128 visible ASCII characters (a UUID works); retries reuse it",
      }),
      short_code: t.Optional(t.String({ maxLength: 64 })),
      channel: t.Optional(t.String({ maxLength: 32 })),
    },
    { additionalProperties: false },
  ),
  tracked: Envelope({
    recorded: t.Boolean(),
    duplicate: t.Boolean(),
    replay_reason: nullable(t.Literal("in_window_duplicate")),
    event_id: t.Integer(),
    recorded_at: t.String(),
    event_type: t.String(),
    client_event_id: t.String(),
    authenticated: t.Boolean(),
  }),
  channels: Envelope({ count: t.Integer(), channels: t.Array(Channel) }),
  errors: Envelope({
    count: t.Integer(),
    errors: t.Array(
      t.Object({
        code: t.String(),
        http_status: t.Integer(),
        title: t.String(),
        retry_class: t.String(),
        client_action: t.String(),
        status_rationale: t.Union([t.String(), t.Null()], {
          description: "why this code answers a status the spec's HTTP status guide does not list (404, 410, …); null for a status the guide lists",
        }),
        when: t.String(),
        routes: t.Array(t.String()),
      }),
    ),
    by_code: t.Record(t.String(), t.Any()),
  }),
  warnings: Envelope({
    count: t.Integer(),
    warnings: t.Array(t.Object({ code: t.String(), title: t.String(), when: t.String(), client_action: t.String() })),
    by_code: t.Record(t.String(), t.Any()),
  }),
  guidance: Envelope({
    discovery_order: t.Array(t.String()),
    flows: t.Array(t.Object({ name: t.String(), steps: t.Array(t.String()) })),
    limits: t.Record(t.String(), t.Any()),
    track_auth: t.Record(t.String(), t.Any()),
    checksum: t.Object({ header: t.String(), definition: t.String() }),
    event_types: t.Array(t.String()),
  }),
  policy: Envelope({
    base_url: t.String(),
    base_host: t.String(),
    allowed_hosts: t.Array(t.String()),
    denied_hosts: t.Array(t.String()),
    schemes: t.Array(t.String()),
    max_url_length: t.Integer(),
    redirect_params: t.Array(t.String()),
    rules: t.Array(t.String()),
    expires_in: t.Object({ min_seconds: t.Integer(), max_seconds: t.Integer(), default_seconds: t.Integer() }),
  }),
  health: Envelope(Health),
  degraded: named("AudioShareDegraded", Unavailable(Health, "degraded: the links table cannot be read")),
  statsQuery: t.Object({ code: t.String({ minLength: 1, maxLength: 64 }), hours: intQuery({ minimum: 1, maximum: 720, defaultValue: 24 }), ...includeMeta }),
  stats: named(
    "ShareLinkStats",
    Envelope({
      short_code: t.String(),
      state: t.String(),
      created_at: t.String(),
      expires_at: t.String(),
      window_hours: t.Integer(),
      totals: t.Object(HitCounts),
      hourly: t.Array(t.Object({ hour: t.String(), ...HitCounts })),
      track_events: t.Object({ count: t.Integer(), by_type: t.Record(t.String(), t.Integer()) }),
    }),
  ),
  codeParams: t.Object({ code: t.String({ description: "The short code (16 characters a-z, 2-7; case-insensitive)" }) }),
  qrQuery: t.Object({
    ...ignoredMetaQuery,
    size: intQuery({ minimum: QR_PNG_MIN_SIZE, maximum: QR_PNG_MAX_SIZE, defaultValue: 256, description: "PNG width and height in pixels" }),
  }),
  revokeBody: t.Object(
    { short_code: t.String({ minLength: 1, maxLength: 64 }), reason: t.String({ minLength: 1, maxLength: 500 }) },
    { additionalProperties: false },
  ),
  revoked: Envelope({
    short_code: t.String(),
    short_url: t.String(),
    revoked: t.Literal(true),
    revoked_at: t.String(),
    reason: t.String(),
    already_revoked: t.Boolean(),
  }),
  tokenBody: t.Object({ name: t.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$" }) }, { additionalProperties: false }),
  tokenCreated: Envelope({ track_token: TrackToken, token: t.String({ description: "Shown once; send as Authorization: Bearer <token> on /track" }) }),
  tokenListQuery: t.Object(PageQuery),
  tokenList: Envelope(ListAnswer("track_tokens", t.Array(TrackToken, { description: "newest first" }))),
  tokenParams: t.Object({ token_id: intPath() }),
  tokenRevoked: Envelope({ track_token: TrackToken, already_revoked: t.Boolean() }),
};
