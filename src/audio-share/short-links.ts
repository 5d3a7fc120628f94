import { base32 } from "../auth/random-codes";
import { type AppContext, stateOf as contextState, slot } from "../context";
import { epochMs } from "../clock";
import { UniqueViolation } from "../db/port";
import { AppError } from "../http/errors/errors";
import { schemaView } from "../http/schema-view";
import { LinkView } from "./model";
import { sameSignature, signLink } from "./signing";
import { insertLink, type LinkRow, linkByCode } from "./store/links";

// Short links: creation, lookup (a one-second cache in front of the database, since the redirect is the hottest
// route: a hot link is answered from memory, without awaiting anything), state, and revocation. With several
// instances each has its own cache: a revoke made on another instance is seen here within CACHE_TTL_MS.

export const CODE_PATTERN = /^[a-z2-7]{16}$/;
/** The cache only spares the database on hot links; a revoke clears it at once (see docs/audio-share.md). */
const CACHE_TTL_MS = 1000;
const CACHE_MAX = 10_000;

export type LinkState = "active" | "expired" | "revoked";

export type { LinkRow };

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
  private readonly cache = new Map<string, { link: ResolvedLink; at: number }>();

  constructor(private readonly ctx: AppContext) {}

  /** The cached link, if it was read less than CACHE_TTL_MS ago (real time): no await on the redirect's hot path. */
  cached(code: string): ResolvedLink | undefined {
    const hit = this.cache.get(code);
    return hit && performance.now() - hit.at < CACHE_TTL_MS ? hit.link : undefined;
  }

  /** The link with this code, or null; cached for a second (real time) after a database read. */
  async get(code: string): Promise<ResolvedLink | null> {
    const hit = this.cached(code);
    if (hit) return hit;
    const row = await linkByCode(this.ctx.store, code);
    if (!row) {
      this.cache.delete(code);
      return null;
    }
    const link: ResolvedLink = { row, expiresMs: Date.parse(row.expires_at), signatureOk: verifyStored(this.ctx, row) };
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(code, { link, at: performance.now() });
    return link;
  }

  forget(code: string): void {
    this.cache.delete(code);
  }

  forgetAll(): void {
    this.cache.clear();
  }

  async create(input: Pick<LinkRow, "source" | "channel" | "title"> & { destination: string; signed: boolean; expiresInSeconds: number }): Promise<LinkRow> {
    const nowMs = this.ctx.clock.now().getTime();
    const expiresUnix = Math.floor(nowMs / 1000) + input.expiresInSeconds;
    const expiresAt = new Date(expiresUnix * 1000).toISOString();
    // 80 random bits make a collision practically impossible; the unique index is the claim, across every instance.
    for (let attempt = 0; ; attempt++) {
      const code = newCode(this.ctx);
      const signature = input.signed ? signLink(this.ctx, code, expiresUnix, input.destination) : null;
      try {
        return await insertLink(this.ctx.store, {
          code,
          destination_url: input.destination,
          source: input.source,
          channel: input.channel,
          title: input.title,
          signed: input.signed ? 1 : 0,
          signature,
          created_at: new Date(nowMs).toISOString(),
          expires_at: expiresAt,
        });
      } catch (err) {
        if (attempt >= 2 || !(err instanceof UniqueViolation)) throw err;
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
const normalizedCode = (code: string): string | null => {
  const normalized = code.toLowerCase();
  return CODE_PATTERN.test(normalized) ? normalized : null;
};

/**
 * The link from memory without awaiting: the link (or null: no such code can exist) when the answer is known now,
 * undefined when the database must be asked (findLink). The redirect's fast path.
 */
export function peekLink(ctx: AppContext, code: string): ResolvedLink | null | undefined {
  // A code found as given is a valid one: its normalising (a lower-casing and a pattern test) is spared.
  const store = linkStore(ctx);
  const asGiven = store.cached(code);
  if (asGiven) return asGiven;
  const normalized = normalizedCode(code);
  return normalized === null ? null : store.cached(normalized);
}

export async function findLink(ctx: AppContext, code: string): Promise<ResolvedLink | null> {
  const normalized = normalizedCode(code);
  return normalized === null ? null : linkStore(ctx).get(normalized);
}

const notFound = (code: string) => new AppError("short_link_not_found", `No short link has the code ${JSON.stringify(code.slice(0, 64))}`);

export async function getLinkOrThrow(ctx: AppContext, code: string): Promise<ResolvedLink> {
  const link = await findLink(ctx, code);
  if (!link) throw notFound(code);
  return link;
}

/**
 * The checks before a link may be followed, in order: it exists, integrity (a signed row must match its
 * signature), then revocation, then expiry (against ctx.clock). Throws the catalog error; returns the link when
 * it may redirect.
 */
export function usableOrThrow(ctx: AppContext, link: ResolvedLink | null, code: string, nowMs?: number): ResolvedLink {
  if (!link) throw notFound(code);
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
  return schemaView(LinkView, r, {
    short_code: r.code,
    short_url: shortUrlOf(ctx, r.code),
    signed: r.signed === 1,
    signature_valid: link.signatureOk,
    state: stateOf(ctx, link),
  });
}
