import type { AppContext } from "../context";
import type { Actor } from "../auth/actors";
import { actorLabel } from "../auth/actors";
import { writeAudit } from "../auth/audit";
import { AppError } from "../http/errors";
import { hitRecorder } from "./hits";
import { CODE_PATTERN, describeLink, expiresUnixOf, getLinkOrThrow, linkStore, shortUrlOf, stateOf, usableLinkOrThrow } from "./short-links";
import { parseCodeOrToken, sameSignature } from "./signing";

// The verbs on an existing short link: expand (metadata, any state), resolve (may it be followed?), revoke
// (operators), stats.

/** `{base_url}/s/audio/<code>` (or the bare path) → code; anything else is short_url_invalid. */
export function codeFromShortUrl(ctx: AppContext, shortUrl: string): string {
  const base = new URL(ctx.config.publicBaseUrl);
  let url: URL | null = null;
  try {
    url = new URL(shortUrl.trim(), base);
  } catch {
    url = null;
  }
  const code = url && url.origin === base.origin && !url.username ? /^\/s\/audio\/([^/]+)\/?$/.exec(url.pathname)?.[1] : undefined;
  if (!code || !CODE_PATTERN.test(code)) {
    throw new AppError("short_url_invalid", `short_url must look like ${shortUrlOf(ctx, "<code>")}`, {
      details: [{ field: "short_url", problem: "is not a short link of this service" }],
    });
  }
  return code;
}

export function expandShortUrl(ctx: AppContext, shortUrl: string) {
  return describeLink(ctx, getLinkOrThrow(ctx, codeFromShortUrl(ctx, shortUrl)));
}

/**
 * POST /short/resolve. `code` is the bare code or the creator's token `code.expires.signature`: a token whose
 * expiry or signature was edited is refused, as is any signed link whose stored row no longer matches.
 */
export function resolveCode(ctx: AppContext, value: string) {
  const parsed = parseCodeOrToken(value);
  if (!parsed)
    throw new AppError("invalid_payload", "code must be a short code or a token code.expires.signature", {
      details: [{ field: "code", problem: "is not a code or token" }],
    });
  const link = getLinkOrThrow(ctx, parsed.code);
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
  usableLinkOrThrow(ctx, parsed.code);
  const nowMs = ctx.clock.now().getTime();
  return {
    ...describeLink(ctx, link),
    token_verified: tokenGiven,
    expires_in_seconds: Math.max(0, Math.floor((link.expiresMs - nowMs) / 1000)),
  };
}

/** Operator revoke: the link answers 410 from now on. Revoking twice changes nothing and says so. */
export function revokeLink(ctx: AppContext, shortCode: string, reason: string, actor: Actor, requestId: string) {
  const link = getLinkOrThrow(ctx, shortCode);
  const code = link.row.code;
  const db = ctx.db.sqlite;
  const now = ctx.clock.now().toISOString();
  const out = db.transaction(() => {
    const current = db.query("SELECT revoked_at, revoke_reason FROM audio_share_links WHERE id = ?").get(link.row.id) as {
      revoked_at: string | null;
      revoke_reason: string | null;
    };
    if (current.revoked_at) return { revoked_at: current.revoked_at, reason: current.revoke_reason ?? "", already_revoked: true };
    db.query("UPDATE audio_share_links SET revoked_at = ?, revoke_reason = ?, revoked_by = ? WHERE id = ?").run(now, reason, actorLabel(actor), link.row.id);
    writeAudit(db, {
      at: now,
      actor,
      action: "audio_share_link.revoke",
      target: code,
      details: { reason, destination_url: link.row.destination_url },
      requestId,
    });
    return { revoked_at: now, reason, already_revoked: false };
  })();
  linkStore(ctx).forget(code);
  return { short_code: code, short_url: shortUrlOf(ctx, code), revoked: true as const, ...out };
}

interface HitRow {
  hour: string;
  clicks: number;
  unique_clicks: number;
  bot_hits: number;
  head_hits: number;
}

/** Per-link stats: buffered hits are written first, so the answer includes every hit served so far. */
export function linkStats(ctx: AppContext, code: string, hours: number) {
  const link = getLinkOrThrow(ctx, code);
  hitRecorder(ctx).flush();
  const db = ctx.db.sqlite;
  const since = new Date(ctx.clock.now().getTime() - hours * 3_600_000);
  const sinceHour = `${since.toISOString().slice(0, 13)}:00:00Z`;
  const totals = db
    .query(
      "SELECT coalesce(sum(clicks),0) AS clicks, coalesce(sum(unique_clicks),0) AS unique_clicks, coalesce(sum(bot_hits),0) AS bot_hits, coalesce(sum(head_hits),0) AS head_hits FROM audio_share_link_hits WHERE link_id = ?",
    )
    .get(link.row.id) as Omit<HitRow, "hour">;
  const hourly = db
    .query("SELECT hour, clicks, unique_clicks, bot_hits, head_hits FROM audio_share_link_hits WHERE link_id = ? AND hour >= ? ORDER BY hour ASC")
    .all(link.row.id, sinceHour) as HitRow[];
  const events = db
    .query("SELECT event_type, count(*) AS n FROM audio_share_track_events WHERE link_id = ? GROUP BY event_type ORDER BY event_type")
    .all(link.row.id) as Array<{ event_type: string; n: number }>;
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

/** GET /health: the tables answer, the key source, the policy size, what is buffered. */
export function audioShareHealth(ctx: AppContext, policy: { allowed: readonly unknown[]; denied: readonly unknown[] }, keySource: string) {
  let database = "ok";
  let links = { total: 0, active: 0 };
  try {
    const now = ctx.clock.now().toISOString();
    links = ctx.db.sqlite
      .query("SELECT count(*) AS total, coalesce(sum(CASE WHEN revoked_at IS NULL AND expires_at > ? THEN 1 ELSE 0 END),0) AS active FROM audio_share_links")
      .get(now) as typeof links;
  } catch (err) {
    database = `unavailable: ${(err as Error).message}`;
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
