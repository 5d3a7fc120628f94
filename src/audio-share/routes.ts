import { createHash } from "node:crypto";
import { sendsHeaders } from "../http/openapi/contract";
import { Elysia, t, type TSchema } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { includeMetaQuery, ok } from "../http/envelope";
import { refuses } from "../http/routes/declare";
import { AppError, ProbeUnavailable } from "../http/errors/errors";
import { adminRoutes } from "./admin-routes";
import { CHECKSUM_HEADER, errorsCatalog, expiresInLimits, guidanceCatalog, TRACK_AUTH_HEADER, TRACK_AUTH_VALUES, warningsCatalog } from "./catalogs";
import { channelById, describeChannels } from "./channels";
import { buildHostPolicy, describePolicy, type HostPolicy } from "./host-policy";
import { audioShareHealth, expandShortUrl, linkStats, resolveCode } from "./link-verbs";
import { AudioShareModel as M } from "./model";
import { redirectRoutes } from "./redirect-routes";
import { buildShare, previewShare, validateBatch, validateShare } from "./service";
import { signingKeys } from "./signing";
import { authenticateTrack, recordTrackEvent, type TrackAuth } from "./track";

const BASE = "/api/public/audio-share-links";
const errs = refuses(404, 410);
const tag = (summary: string) => ({
  tags: ["audio-share"],
  summary,
  ...sendsHeaders({ [CHECKSUM_HEADER]: "SHA-256 (hex) of the exact body bytes of a JSON success" }),
});
/** A link route's answer, its summary: it refuses a link unknown (404) or gone (410). */
const linkAnswers = <R extends TSchema>(schema: R, summary: string) => ({ response: { 200: schema, ...errs }, detail: tag(summary) });
/** A catalog's answer and summary: it reads no input but include_meta. */
const catalog = <R extends TSchema>(schema: R, summary: string) => ({ query: t.Object(includeMetaQuery), response: { 200: schema }, detail: tag(summary) });

/**
 * Every JSON success of the audio-share API leaves as the exact bytes whose SHA-256 is in
 * X-Audio-Share-Checksum (the canonical body is the body as sent, after include_meta).
 */
function withChecksum({ responseValue, set }: { responseValue: unknown; set: { status?: unknown; headers: Record<string, unknown> } }) {
  if (responseValue === null || typeof responseValue !== "object" || responseValue instanceof Response) return;
  const body = JSON.stringify(responseValue);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(set.headers)) if (v !== undefined) headers[k] = String(v);
  headers["content-type"] = "application/json; charset=utf-8";
  headers[CHECKSUM_HEADER] = createHash("sha256").update(body).digest("hex");
  return new Response(body, { status: typeof set.status === "number" ? set.status : 200, headers });
}

/** The request id the HTTP core put on the answer's headers (src/http/core.ts). */
const requestIdOf = (headers: Record<string, unknown>): string => String(headers["x-request-id"] ?? "unknown");

function publicRoutes(ctx: AppContext, policy: HostPolicy) {
  // Track auth is decided before the body is validated, so an unauthenticated caller learns nothing from it. Its
  // header is set there too, so every answer after that point (200, 400, 401, 404) says what auth found.
  const trackAuth = new WeakMap<Request, TrackAuth>();
  return (
    new Elysia({ name: "herald:audio-share-api" })
      .onAfterHandle(withChecksum)
      // HEAD is safe (RFC 9110 §9.2.1): it runs every check but issues no short link.
      .get(BASE, async ({ query, request }) => ok(await buildShare(ctx, policy, query, request.method !== "HEAD")), {
        query: M.buildQuery,
        ...linkAnswers(M.built, "Build share URLs per channel; use_short=1 (and token_mode=signed) also issues a short link"),
      })
      // A denied destination is a finding here (200), not a refusal; the answer still carries its request_id, as the spec
      // says of a destination_host_denied payload.
      .get(`${BASE}/validate`, ({ query, set }) => ok({ ...validateShare(policy, query), request_id: requestIdOf(set.headers) }), {
        query: M.validateQuery,
        ...linkAnswers(M.validated, "Check a destination and channels against the host policy; findings, never a failure status"),
      })
      .post(`${BASE}/validate/batch`, ({ body, set }) => ok({ ...validateBatch(policy, body), request_id: requestIdOf(set.headers) }), {
        body: M.batchBody,
        ...linkAnswers(M.batch, "Validate up to 100 items; each is reported on its own"),
      })
      .get(`${BASE}/preview`, ({ query }) => ok(previewShare(policy, query)), {
        query: M.previewQuery,
        ...linkAnswers(M.preview, "What each channel would show (message, length, truncation); issues nothing"),
      })
      .get(`${BASE}/expand`, async ({ query }) => ok(await expandShortUrl(ctx, query.short_url)), {
        query: M.expandQuery,
        ...linkAnswers(M.link, "Metadata of a short URL, in any state (destination, created, expires, state, signed, channel)"),
      })
      .post(`${BASE}/expand`, async ({ body }) => ok(await expandShortUrl(ctx, body.short_url)), {
        body: M.expandBody,
        ...linkAnswers(M.link, "Metadata of a short URL (JSON body)"),
      })
      .post(`${BASE}/short/resolve`, async ({ body }) => ok(await resolveCode(ctx, body.code)), {
        body: M.resolveBody,
        response: { 200: M.resolved, ...refuses(403), ...errs },
        detail: tag("Resolve a code or signed token: checks signature, revocation and expiry"),
      })
      .post(
        `${BASE}/track`,
        async ({ body, request }) => {
          const auth = trackAuth.get(request);
          if (!auth) throw new Error("track auth was not decided before the handler"); // transform always runs first
          if (body.channel !== undefined && !channelById(body.channel)) {
            throw new AppError("channel_unknown", `Unknown channel ${JSON.stringify(body.channel)}; see channels.json`, {
              details: [{ field: "channel", problem: "is not a known channel" }],
            });
          }
          const out = await recordTrackEvent(ctx, policy, body, auth);
          return ok({ ...out, event_type: body.event_type, client_event_id: body.client_event_id, authenticated: auth.tokenId !== null });
        },
        {
          async transform({ request, set }) {
            // A refusal throws with the header on the error; an acceptance sets it for whatever answer follows.
            const auth = await authenticateTrack(ctx, request.headers.get("authorization"));
            set.headers[TRACK_AUTH_HEADER] = auth.header;
            trackAuth.set(request, auth);
          },
          body: M.trackBody,
          response: { 200: M.tracked, ...refuses(401), ...errs },
          detail: {
            ...tag(
              "Record a share event (copy, share, open …); client_event_id dedupes retries; Authorization: Bearer <track token> per AUDIO_SHARE_TRACK_AUTH, which X-Audio-Share-Track-Auth reports (guidance.json track_auth.header_values)",
            ),
            ...sendsHeaders(
              {
                [CHECKSUM_HEADER]: "SHA-256 (hex) of the exact body bytes of a JSON success",
                [TRACK_AUTH_HEADER]: {
                  description:
                    "optional when no bearer was needed or judged, else what the bearer was (guidance.json track_auth.header_values), on refusals too",
                  values: Object.keys(TRACK_AUTH_VALUES),
                },
              },
              { refusals: true },
            ),
            // The token is required, optional (a bearer that is sent must be valid) or not read, per this deployment.
            security: { required: [{ TrackBearer: [] }], optional: [{ TrackBearer: [] }, {}], off: [] }[ctx.config.audioShare.trackAuth],
          },
        },
      )
      .get(`${BASE}/stats`, async ({ query }) => ok(await linkStats(ctx, query.code, query.hours ?? 48)), {
        query: M.statsQuery,
        ...linkAnswers(M.stats, "Per-link counts: clicks, unique clicks per client-hour, bots and HEADs apart, track events"),
      })
      .get(
        `${BASE}/channels.json`,
        () => {
          const channels = describeChannels();
          return ok({ count: channels.length, channels });
        },
        catalog(M.channels, "Channel registry: URL templates, length limits, capabilities"),
      )
      .get(`${BASE}/errors.json`, () => ok(errorsCatalog()), catalog(M.errors, "Audio-share error catalog"))
      .get(`${BASE}/warnings.json`, () => ok(warningsCatalog()), catalog(M.warnings, "Audio-share warning catalog"))
      .get(`${BASE}/guidance.json`, () => ok(guidanceCatalog(ctx)), catalog(M.guidance, "Recommended call order, flows and limits"))
      .get(
        `${BASE}/policy.json`,
        () => ok({ ...describePolicy(policy), expires_in: expiresInLimits(ctx) }),
        catalog(M.policy, "Destination host policy snapshot (allow list, deny list, rules)"),
      )
      .get(
        `${BASE}/health`,
        async () => {
          const health = await audioShareHealth(ctx, policy, signingKeys(ctx).source);
          if (health.status === "ok") return ok(health);
          throw new ProbeUnavailable("Audio-share is degraded: its links table cannot be read", health);
        },
        { query: t.Object(includeMetaQuery), response: { 200: M.health, 503: M.degraded }, detail: tag("Audio-share health") },
      )
  );
}

/** The audio-share API, the /s/audio redirects and QR codes, and the operator routes. */
export function audioShareRoutes(ctx: AppContext, guards: Guards) {
  const policy = buildHostPolicy(ctx.config.publicBaseUrl, ctx.config.audioShare.allowedHosts, ctx.config.audioShare.deniedHosts);
  return new Elysia({ name: "herald:audio-share" }).use(publicRoutes(ctx, policy)).use(redirectRoutes(ctx)).use(adminRoutes(ctx, guards));
}
