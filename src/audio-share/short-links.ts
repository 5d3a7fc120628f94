import type { Statement } from "bun:sqlite";
import { base32 } from "../auth/random-codes";
import { type AppContext, stateOf as contextState, slot } from "../context";
import { epochMs } from "../clock";
import { AppError } from "../http/errors";
import { sameSignature, signLink } from "./signing";

// Short links: creation, lookup (prepared statement plus a one-second cache, since the redirect is the
// hottest route), state, and revocation.

export const CODE_PATTERN = /^[a-z2-7]{16}$/;
/** The cache only spares the database on hot links; a revoke clears it at once (see docs/audio-share.md). */
const CACHE_TTL_MS = 1000;
const CACHE_MAX = 10_000;

export type LinkState = "active" | "expired" | "revoked";

export interface LinkRow {
  id: number;
  code: string;
  destination_url: string;
  source: "track" | "file";
  channel: string | null;
  title: string | null;
  signed: number;
  signature: string | null;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  revoke_reason: string | null;
  revoked_by: string | null;
}

export interface ResolvedLink {
  row: LinkRow;
  expiresMs: number;
  /** Signed links: the stored signature matches the stored row. Unsigned links: always true. */
  signatureOk: boolean;
}

/** 16 characters of base32 = 80 random bits from ctx.rng: unguessable, and case-insensitive in print. */
export function newCode(ctx: AppContext): string {
  return base32(ctx.rng.bytes(10));
}

export const shortUrlOf = (ctx: AppContext, code: string) => `${ctx.config.publicBaseUrl}/s/audio/${code}`;
export const expiresUnixOf = (row: LinkRow) => Math.floor(Date.parse(row.expires_at) / 1000);

class LinkStore {
  private readonly byCode: Statement;
  private readonly insert: Statement;
  private readonly cache = new Map<string, { link: ResolvedLink; at: number }>();

  constructor(private readonly ctx: AppContext) {
    this.byCode = ctx.db.sqlite.prepare("SELECT * FROM audio_share_links WHERE code = ?");
    this.insert = ctx.db.sqlite.prepare(
      `INSERT INTO audio_share_links (code, destination_url, source, channel, title, signed, signature, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    );
  }

  /** The link with this code, or null; cached for a second (real time) after a database read. */
  get(code: string): ResolvedLink | null {
    const now = performance.now();
    const hit = this.cache.get(code);
    if (hit && now - hit.at < CACHE_TTL_MS) return hit.link;
    const row = this.byCode.get(code) as LinkRow | null;
    if (!row) {
      this.cache.delete(code);
      return null;
    }
    const link: ResolvedLink = { row, expiresMs: Date.parse(row.expires_at), signatureOk: verifyStored(this.ctx, row) };
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(code, { link, at: now });
    return link;
  }

  forget(code: string): void {
    this.cache.delete(code);
  }

  forgetAll(): void {
    this.cache.clear();
  }

  create(input: {
    destination: string;
    source: "track" | "file";
    channel: string | null;
    title: string | null;
    signed: boolean;
    expiresInSeconds: number;
  }): LinkRow {
    const nowMs = this.ctx.clock.now().getTime();
    const expiresUnix = Math.floor(nowMs / 1000) + input.expiresInSeconds;
    const expiresAt = new Date(expiresUnix * 1000).toISOString();
    // 80 random bits make a collision practically impossible; the unique index still has the last word.
    for (let attempt = 0; ; attempt++) {
      const code = newCode(this.ctx);
      const signature = input.signed ? signLink(this.ctx, code, expiresUnix, input.destination) : null;
      try {
        return this.insert.get(
          code,
          input.destination,
          input.source,
          input.channel,
          input.title,
          input.signed ? 1 : 0,
          signature,
          new Date(nowMs).toISOString(),
          expiresAt,
        ) as LinkRow;
      } catch (err) {
        if (attempt >= 2 || !String((err as Error).message).includes("UNIQUE")) throw err;
      }
    }
  }
}

function verifyStored(ctx: AppContext, row: LinkRow): boolean {
  if (!row.signed) return true;
  if (!row.signature) return false;
  return sameSignature(row.signature, signLink(ctx, row.code, expiresUnixOf(row), row.destination_url));
}

const STORE = slot("audio-share link store", (ctx) => new LinkStore(ctx));

export function linkStore(ctx: AppContext): LinkStore {
  return contextState(ctx, STORE);
}

export function stateOf(ctx: AppContext, link: ResolvedLink, nowMs: number = epochMs(ctx.clock)): LinkState {
  if (link.row.revoked_at) return "revoked";
  return nowMs >= link.expiresMs ? "expired" : "active";
}

/** Codes are lower-case base32, so an upper-cased copy (read aloud, retyped from print) is the same code. */
export function getLinkOrThrow(ctx: AppContext, code: string): ResolvedLink {
  const normalized = code.toLowerCase();
  const link = CODE_PATTERN.test(normalized) ? linkStore(ctx).get(normalized) : null;
  if (!link) throw new AppError("short_link_not_found", `No short link has the code ${JSON.stringify(code.slice(0, 64))}`);
  return link;
}

/**
 * The checks before a link may be followed, in order: integrity (a signed row must match its signature), then
 * revocation, then expiry (against ctx.clock). Throws the catalog error; returns the link when it may redirect.
 */
export function usableLinkOrThrow(ctx: AppContext, code: string, nowMs?: number): ResolvedLink {
  const link = getLinkOrThrow(ctx, code);
  if (!link.signatureOk)
    throw new AppError("short_link_signature_invalid", "This link's stored destination or expiry does not match its signature; it will not redirect");
  const state = stateOf(ctx, link, nowMs);
  if (state === "revoked")
    throw new AppError("short_link_revoked", `This link was revoked at ${link.row.revoked_at}`, { details: { revoked_at: link.row.revoked_at } });
  if (state === "expired")
    throw new AppError("short_link_expired", `This link expired at ${link.row.expires_at}`, { details: { expires_at: link.row.expires_at } });
  return link;
}

/** What expand and the admin routes show of a link. */
export function describeLink(ctx: AppContext, link: ResolvedLink) {
  const r = link.row;
  return {
    short_code: r.code,
    short_url: shortUrlOf(ctx, r.code),
    destination_url: r.destination_url,
    source: r.source,
    channel: r.channel,
    title: r.title,
    signed: r.signed === 1,
    signature_valid: link.signatureOk,
    state: stateOf(ctx, link),
    created_at: r.created_at,
    expires_at: r.expires_at,
    revoked_at: r.revoked_at,
  };
}
