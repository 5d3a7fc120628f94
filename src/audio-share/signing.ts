import { createHmac, timingSafeEqual } from "node:crypto";
import { type AppContext, slot, stateOf } from "../context";
import { decodeMasterKey } from "../auth/secret-box";

// Signed short links: signature = base64url(HMAC-SHA256(key, canonical)) with
//   canonical = "audio-share-link/v1" \n code \n expires_at (unix seconds) \n destination_url
// The token handed to the link's creator is `<code>.<expires unix>.<signature>`; /short/resolve checks it, and
// every resolve or redirect of a signed link re-checks the stored signature against the stored row.

const LABEL = "herald/audio-share/signing-key/v1";
const CANONICAL_PREFIX = "audio-share-link/v1";

export interface SigningKeys {
  key: Buffer;
  source: "configured" | "derived";
}

/**
 * AUDIO_SHARE_SIGNING_KEY when set; otherwise HMAC-SHA256(master key, LABEL), so development needs no setup
 * and production (whose master key is required) still gets a key used for nothing else. Derived once per context.
 */
const KEYS = slot("audio-share signing keys", (ctx): SigningKeys => {
  const configured = ctx.config.audioShare.signingKey;
  return configured ? { key: decodeMasterKey(configured), source: "configured" } : { key: ctx.secrets.derive(LABEL), source: "derived" };
});

export const signingKeys = (ctx: AppContext): SigningKeys => stateOf(ctx, KEYS);

export const canonicalLink = (code: string, expiresUnix: number, destination: string) => `${CANONICAL_PREFIX}\n${code}\n${expiresUnix}\n${destination}`;

export function signLink(ctx: AppContext, code: string, expiresUnix: number, destination: string): string {
  return createHmac("sha256", signingKeys(ctx).key)
    .update(canonicalLink(code, expiresUnix, destination))
    .digest("base64url");
}

/** Constant-time comparison of two base64url signatures. */
export function sameSignature(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export const tokenOf = (code: string, expiresUnix: number, signature: string) => `${code}.${expiresUnix}.${signature}`;

/** `code` alone, or the creator's `code.expires.signature`; null when it is neither shape. */
export function parseCodeOrToken(value: string) {
  const parts = value.trim().split(".");
  if (parts.length === 1) return { code: parts[0]!, expiresUnix: null, signature: null };
  if (parts.length !== 3 || !/^\d{1,12}$/.test(parts[1]!) || !/^[A-Za-z0-9_-]{1,100}$/.test(parts[2]!)) return null;
  return { code: parts[0]!, expiresUnix: Number(parts[1]), signature: parts[2]! };
}

/**
 * The per-day salt of click hashes: derived from the signing key and the UTC date, never stored, so a stored
 * hash of (IP, user agent) can be neither reversed by trying every IPv4 address nor joined across days.
 */
export function dailySalt(ctx: AppContext, day: string): Buffer {
  return createHmac("sha256", signingKeys(ctx).key).update(`click-salt/${day}`).digest();
}

/** hex(sha256(hex(salt) \n ip \n user agent)), first 128 bits. Bun's one-shot SHA-256: ~0.4 µs on the redirect path. */
export function clientHash(saltHex: string, ip: string, userAgent: string): string {
  return (Bun.SHA256.hash(`${saltHex}\n${ip}\n${userAgent}`, "hex") as string).slice(0, 32);
}
