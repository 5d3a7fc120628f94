import type { AppContext } from "../context";
import type { Actor } from "../auth/actors";
import { actorLabel } from "../auth/actors";
import { recordAudit } from "../auth/audit";
import { AppError } from "../http/errors/errors";
import { hitRecorder } from "./hits";
import { CODE_PATTERN, describeLink, expiresUnixOf, getLinkOrThrow, linkStore, shortUrlOf, stateOf, usableOrThrow } from "./short-links";
import { parseCodeOrToken, sameSignature } from "./signing";
import { hitsOf, linkCounts, revocationOf, revoke } from "./store/links";
import { eventCountsTask } from "./store/track";

// The verbs on an existing short link: expand (metadata, any state), resolve (may it be followed?), revoke
// (operators), stats.

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * A loopback base (a development or test deployment without PUBLIC_BASE_URL) is reached as localhost, 127.0.0.1 or
 * [::1] alike: the same scheme and port on any of them is this service.
 */
const sameLoopback = (url: URL, base: URL): boolean =>
  LOOPBACK_HOSTS.has(base.hostname) && LOOPBACK_HOSTS.has(url.hostname) && url.protocol === base.protocol && url.port === base.port;

/** `{base_url}/s/audio/<code>` (or the bare path) → code; anything else is short_url_invalid. */
export function codeFromShortUrl(ctx: AppContext, shortUrl: string): string {
  const base = new URL(ctx.config.publicBaseUrl);
  let url: URL | null = null;
  try {
    url = new URL(shortUrl.trim(), base);
  } catch {
    url = null;
  }
  const ours = url !== null && !url.username && (url.origin === base.origin || sameLoopback(url, base));
  // Codes are lower-case base32; an upper-cased copy is the same code, as the redirect reads it.
  const code = ours ? /^\/s\/audio\/([^/]+)\/?$/.exec(url!.pathname)?.[1]?.toLowerCase() : undefined;
  if (!code || !CODE_PATTERN.test(code)) {
    throw new AppError("short_url_invalid", `short_url must look like ${shortUrlOf(ctx, "<code>")}`, {
      details: [{ field: "short_url", problem: "is not a short link of this service" }],
    });
  }
  return code;
}

export async function expandShortUrl(ctx: AppContext, shortUrl: string) {
  return describeLink(ctx, await getLinkOrThrow(ctx, codeFromShortUrl(ctx, shortUrl)));
}

/**
 * POST /short/resolve. `code` is the bare code or the creator's token `code.expires.signature`: a token whose
 * expiry or signature was edited is refused, as is any signed link whose stored row no longer matches.
 */
export async function resolveCode(ctx: AppContext, value: string) {
  const parsed = parseCodeOrToken(value);
  // A code is 16 base32 characters (any case): anything else is not a code at all (400), not an unknown one (404).
  if (!parsed || !CODE_PATTERN.test(parsed.code.toLowerCase()))
    throw new AppError("invalid_payload", "code must be a short code or a token code.expires.signature", {
      details: [{ field: "code", problem: "is not a code or token" }],
    });
  const link = await getLinkOrThrow(ctx, parsed.code);
  const tokenGiven = parsed.signature !== null;
  if (tokenGiven) {
    const row = link.row;
    const matches = row.signed === 1 && row.signature !== null && parsed.expiresUnix === expiresUnixOf(row) && sameSignature(parsed.signature!, row.signature);
    if (!matches)
      throw new AppError(
        "short_link_signature_invalid",
        row.signed ? "The token's expiry or signature does not match this link" : "This link is not signed; resolve it by its bare code",
      );
  }
  usableOrThrow(ctx, link, parsed.code);
  const nowMs = ctx.clock.now().getTime();
  return {
    ...describeLink(ctx, link),
    token_verified: tokenGiven,
    expires_in_seconds: Math.max(0, Math.floor((link.expiresMs - nowMs) / 1000)),
  };
}

/** Operator revoke: the link answers 410 from now on. Revoking twice changes nothing and says so. */
export async function revokeLink(ctx: AppContext, shortCode: string, reason: string, actor: Actor, requestId: string) {
  const link = await getLinkOrThrow(ctx, shortCode);
  const code = link.row.code;
  const now = ctx.clock.now().toISOString();
  const out = await ctx.store.tx(async (t) => {
    // Conditional: of two operators revoking at once (on any instances), one revokes and audits; the other is told.
    if (!(await revoke(t, link.row.id, now, reason, actorLabel(actor)))) {
      const current = await revocationOf(t, link.row.id);
      return { revoked_at: current?.revoked_at ?? now, reason: current?.revoke_reason ?? "", already_revoked: true };
    }
    const details = { reason, destination_url: link.row.destination_url };
    await recordAudit(t, { at: now, actor, action: "audio_share_link.revoke", target: code, details, requestId });
    return { revoked_at: now, reason, already_revoked: false };
  });
  linkStore(ctx).forget(code);
  return { short_code: code, short_url: shortUrlOf(ctx, code), revoked: true as const, ...out };
}

/** Per-link stats: this instance's buffered hits are written first, so the answer includes every hit it served. */
export async function linkStats(ctx: AppContext, code: string, hours: number) {
  const link = await getLinkOrThrow(ctx, code);
  await hitRecorder(ctx).flush();
  const since = new Date(ctx.clock.now().getTime() - hours * 3_600_000);
  const sinceHour = `${since.toISOString().slice(0, 13)}:00:00Z`;
  const { totals, hourly } = await hitsOf(ctx.store, link.row.id, sinceHour);
  const events = await ctx.store.apart(eventCountsTask, { linkId: link.row.id });
  return {
    short_code: link.row.code,
    state: stateOf(ctx, link),
    created_at: link.row.created_at,
    expires_at: link.row.expires_at,
    window_hours: hours,
    totals,
    hourly,
    track_events: { count: events.reduce((s, e) => s + e.n, 0), by_type: Object.fromEntries(events.map((e) => [e.event_type, e.n])) },
  };
}

/** GET /health counts the links stored, and the active ones, up to this many; beyond, it says total_capped or active_capped. */
export const LINK_COUNT_CAP = 10_000;

/** GET /health: the tables answer, the key source, the policy size, what is buffered. */
export async function audioShareHealth(ctx: AppContext, policy: { allowed: readonly unknown[]; denied: readonly unknown[] }, keySource: string) {
  let database = "ok";
  let links = { total: 0, active: 0, total_capped: false, active_capped: false };
  try {
    const { total, active } = await linkCounts(ctx.store, ctx.clock.now().toISOString(), LINK_COUNT_CAP);
    const cap = (n: number) => Math.min(n, LINK_COUNT_CAP);
    links = { total: cap(total), active: cap(active), total_capped: total > LINK_COUNT_CAP, active_capped: active > LINK_COUNT_CAP };
  } catch (err) {
    // Anyone may call this: the cause is the operators' (the log), not the answer's. Debug, not warn: a database
    // outage is logged once by the outage gate, not once per probe.
    ctx.log.debug("audio-share health: the links table cannot be read", { error: (err as Error).message });
    database = "unavailable";
  }
  return {
    status: database === "ok" ? ("ok" as const) : ("degraded" as const),
    database,
    signing_key: keySource,
    track_auth: ctx.config.audioShare.trackAuth,
    policy: { allowed_hosts: policy.allowed.length + 1, denied_hosts: policy.denied.length },
    links,
    pending_hit_buckets: hitRecorder(ctx).pending,
    checked_at: ctx.clock.now().toISOString(),
  };
}
