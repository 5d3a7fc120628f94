import type { AppContext } from "../context";
import { actorLabel, type Actor } from "../auth/actors";
import { BEARER, sha256Hex } from "../auth/admin";
import { recordAudit } from "../auth/audit";
import { AppError, found } from "../http/errors/errors";
import { type PageRequest, pageOf } from "../http/pagination";
import { TRACK_AUTH_HEADER, type TrackAuthHeader } from "./catalogs";
import { checkDestination, type HostPolicy } from "./host-policy";
import type { AudioShareModel } from "./model";
import { CODE_PATTERN, linkStore } from "./short-links";
import {
  firstEventSince,
  insertEvent,
  insertToken,
  liveTokenIdByHash,
  revokeToken,
  serializeEventId,
  tokenById,
  tokensPage,
  touchToken,
  type TrackTokenView,
} from "./store/track";

// POST /track: client-side share analytics (copy, share, open …) with client_event_id dedupe, behind the
// optional bearer auth of AUDIO_SHARE_TRACK_AUTH. Bearer tokens are issued by operators and stored hashed.

export interface TrackAuth {
  /** The X-Audio-Share-Track-Auth value (catalogs.ts TRACK_AUTH_VALUES), one of the spec's four. */
  header: TrackAuthHeader;
  tokenId: number | null;
}

/**
 * Decides the track request's authentication. Throws 401 (with the header already set on the error) when the
 * mode refuses it: required without a bearer, or any mode but off with a bearer that is not valid — a wrong
 * credential is a client bug worth surfacing, never silently counted as anonymous. The header takes only the
 * spec's four values and never one value for an accepted and a refused request: in optional mode a bearer, once
 * sent, must be valid, so it is judged as in required mode (required_invalid_bearer, required_valid_bearer); a
 * request without one, and every request in off mode, says `optional`.
 */
export async function authenticateTrack(ctx: AppContext, authorization: string | null): Promise<TrackAuth> {
  const mode = ctx.config.audioShare.trackAuth;
  if (mode === "off") return { header: "optional", tokenId: null };
  if (!authorization) {
    if (mode === "optional") return { header: "optional", tokenId: null };
    throw new AppError("track_auth_required", "This service requires Authorization: Bearer <track token> on /track", {
      headers: { [TRACK_AUTH_HEADER]: "required_missing_bearer" },
    });
  }
  const match = BEARER.exec(authorization);
  const row = match ? await liveTokenIdByHash(ctx.store, sha256Hex(match[1]!)) : null;
  if (!row) {
    throw new AppError("track_auth_invalid", "The track bearer token is unknown, revoked or malformed; send Authorization: Bearer <track token>", {
      headers: { [TRACK_AUTH_HEADER]: "required_invalid_bearer" },
    });
  }
  await touchToken(ctx.store, row.id, ctx.clock.now().toISOString());
  return { header: "required_valid_bearer", tokenId: row.id };
}

export type TrackInput = typeof AudioShareModel.trackBody.static;

/** A short URL of this service as destination names its link, so its events show in the link's stats. */
async function linkIdFor(ctx: AppContext, input: TrackInput, destination: URL): Promise<number | null> {
  const base = new URL(ctx.config.publicBaseUrl);
  const fromUrl = destination.origin === base.origin ? /^\/s\/audio\/([a-z2-7]{16})$/.exec(destination.pathname)?.[1] : undefined;
  const code = input.short_code ?? fromUrl;
  if (code === undefined) return null;
  const link = CODE_PATTERN.test(code) ? await linkStore(ctx).get(code) : null;
  if (!link) throw new AppError("short_link_not_found", `No short link has the code ${JSON.stringify(code)}`);
  return link.row.id;
}

/**
 * Records one event unless the same client_event_id was recorded inside AUDIO_SHARE_TRACK_DEDUPE_SECONDS, in
 * which case the first event is reported with replay_reason=in_window_duplicate and nothing is written. Out of
 * the window the id is new again (a client that reuses ids over days is counted each time).
 */
export async function recordTrackEvent(ctx: AppContext, policy: HostPolicy, input: TrackInput, auth: TrackAuth) {
  const check = checkDestination(policy, input.destination_url, "destination_url");
  if (!check.ok) {
    // The denied host at the top level beside request_id, as the build route answers it (docs/audio-share.md).
    const { code, message, host, reason } = check.error;
    throw new AppError(code, message, {
      extra: code === "destination_host_denied" ? { host: host ?? null, reason } : undefined,
      details: { host: host ?? null, reason, field: "destination_url" },
    });
  }
  const linkId = await linkIdFor(ctx, input, check.url);
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - ctx.config.audioShare.trackDedupeSeconds * 1000).toISOString();
  return ctx.store.tx(async (t) => {
    await serializeEventId(t, ctx.store.dialect, input.client_event_id);
    const first = await firstEventSince(t, input.client_event_id, since);
    if (first) {
      return { recorded: false, duplicate: true, replay_reason: "in_window_duplicate" as const, event_id: first.id, recorded_at: first.created_at };
    }
    const row = await insertEvent(t, {
      client_event_id: input.client_event_id,
      event_type: input.event_type,
      destination_url: check.url.href,
      link_id: linkId,
      channel: input.channel ?? null,
      token_id: auth.tokenId,
      created_at: now.toISOString(),
    });
    return { recorded: true, duplicate: false, replay_reason: null, event_id: row.id, recorded_at: row.created_at };
  });
}

// ------------------------------------------------------------------------------------------- tokens (operators)

export type { TrackTokenView };

export async function issueTrackToken(ctx: AppContext, name: string, actor: Actor, requestId: string): Promise<TrackTokenView & { token: string }> {
  const token = "ast_" + Buffer.from(ctx.rng.bytes(32)).toString("base64url");
  const now = ctx.clock.now().toISOString();
  const view = await ctx.store.tx(async (t) => {
    const row = await insertToken(t, name, sha256Hex(token), now, actorLabel(actor));
    await recordAudit(t, { at: now, actor, action: "audio_share_track_token.create", target: String(row.id), details: { name }, requestId });
    return row;
  });
  return { ...view, token };
}

/** A page of the tokens, newest first (never the tokens themselves), by offset or by cursor (the last id). */
export async function listTrackTokens(ctx: AppContext, page: PageRequest) {
  return pageOf(await tokensPage(ctx.store, { before: page.after, limit: page.limit + 1, offset: page.offset }), page, (r) => r.id);
}

export async function revokeTrackToken(ctx: AppContext, id: number, actor: Actor, requestId: string): Promise<TrackTokenView & { already_revoked: boolean }> {
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    const row = found(await tokenById(t, id), "Track token", id);
    if (row.revoked_at) return { ...row, already_revoked: true };
    // Conditional: a token another request revoked meanwhile is reported as already revoked, and audited once.
    if (!(await revokeToken(t, id, now))) return { ...((await tokenById(t, id)) ?? row), already_revoked: true };
    await recordAudit(t, { at: now, actor, action: "audio_share_track_token.revoke", target: String(id), requestId });
    return { ...row, revoked_at: now, already_revoked: false };
  });
}
