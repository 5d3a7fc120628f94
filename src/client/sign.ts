/**
 * Herald partner signing primitives (docs/design.md §3) and outgoing-webhook verification (§6).
 *
 * Standalone on purpose: this folder is published as the `@herald/client` package (sdk/, docs/sdk.md), so it
 * imports nothing from the server code — only node:crypto (available in Node ≥ 20, Bun and Deno).
 *
 *   canonical = METHOD "\n" TARGET "\n" TIMESTAMP "\n" NONCE "\n" hex(sha256(RAW_BODY))
 *   signature = hex(HMAC-SHA256(partner_secret, canonical))
 *
 *   webhook signature = hex(HMAC-SHA256(webhook_secret, TIMESTAMP "." RAW_BODY))
 */
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";

/** Raw request/response body: the exact bytes (a string is taken as its UTF-8 bytes). */
export type RawBody = string | Uint8Array;

export interface CanonicalInput {
  method: string;
  /** Path plus raw query exactly as sent, e.g. `/api/salutes/balance?user_id=42` (no `?` when there is no query). */
  target: string;
  /** Unix seconds, the `X-Partner-Timestamp` value. */
  timestamp: number | string;
  /** The `X-Partner-Nonce` value; empty/absent → empty line. */
  nonce?: string | null;
  /** Raw body; absent → empty string (sha256 e3b0c442…b855). */
  body?: RawBody | null;
}

export interface SignRequestInput {
  keyId: string;
  secret: string;
  method: string;
  target: string;
  body?: RawBody | null;
  /** Unix seconds; defaults to the current time. */
  timestamp?: number | string;
  /** Hex nonce; when given it is signed and sent as `X-Partner-Nonce`. */
  nonce?: string | null;
}

export interface PartnerSignatureHeaders {
  "X-Partner-Key": string;
  "X-Partner-Timestamp": string;
  "X-Partner-Signature": string;
  "X-Partner-Nonce"?: string;
}

export interface SignedRequest {
  headers: PartnerSignatureHeaders;
  canonical: string;
  signature: string;
}

export const EMPTY_BODY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// Under Bun, the one-shot hash (no hasher object to allocate and finalize); elsewhere node:crypto. Looked up on
// globalThis rather than through Bun's types, because the published package is typed for Node as well.
const bunSha256 = (globalThis as { Bun?: { SHA256: { hash(data: RawBody, encoding: "hex"): string } } }).Bun?.SHA256;

export function sha256Hex(body?: RawBody | null): string {
  // Most signed requests are bodiless GETs: skip hashing the empty string.
  if (body === undefined || body === null || body.length === 0) return EMPTY_BODY_SHA256;
  if (bunSha256) return bunSha256.hash(body, "hex");
  return createHash("sha256").update(body).digest("hex");
}

export function hmacSha256Hex(secret: string | Uint8Array, message: RawBody): string {
  return createHmac("sha256", secret).update(message).digest("hex");
}

/** docs/design.md §3 canonical string. */
export function canonicalString(input: CanonicalInput): string {
  return `${input.method.toUpperCase()}\n${input.target}\n${input.timestamp}\n${input.nonce ?? ""}\n${sha256Hex(input.body)}`;
}

export function unixSeconds(ms: number = Date.now()): number {
  return Math.floor(ms / 1000);
}

/** Signs one request attempt. Every attempt needs its own timestamp and (on mutations) its own nonce. */
export function signRequest(input: SignRequestInput): SignedRequest {
  const timestamp = String(input.timestamp ?? unixSeconds());
  const nonce = input.nonce ? input.nonce : undefined;
  const canonical = canonicalString({
    method: input.method,
    target: input.target,
    timestamp,
    nonce,
    body: input.body,
  });
  const signature = hmacSha256Hex(input.secret, canonical);
  const headers: PartnerSignatureHeaders = {
    "X-Partner-Key": input.keyId,
    "X-Partner-Timestamp": timestamp,
    "X-Partner-Signature": signature,
  };
  if (nonce) headers["X-Partner-Nonce"] = nonce;
  return { headers, canonical, signature };
}

/** 32 lowercase hex chars (16 random bytes); the server accepts 16–128 hex chars, single use. */
export function newNonce(): string {
  return randomBytes(16).toString("hex");
}

/** A fresh Idempotency-Key (UUID v4). Reuse it only when retrying the SAME logical request. */
export function newIdempotencyKey(): string {
  return randomUUID();
}

function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `X-Webhook-Signature` = hex(HMAC-SHA256(secret, `${timestamp}.${rawBody}`)) over the exact raw bytes. */
export function webhookSignature(secret: string, timestamp: number | string, rawBody: RawBody): string {
  if (typeof rawBody === "string") return hmacSha256Hex(secret, `${timestamp}.${rawBody}`);
  const prefix = new TextEncoder().encode(`${timestamp}.`);
  return hmacSha256Hex(secret, concatBytes(prefix, rawBody));
}

export type WebhookVerifyReason = "ok" | "missing_signature" | "malformed_signature" | "invalid_timestamp" | "stale_timestamp" | "signature_mismatch";

export interface WebhookVerifyResult {
  valid: boolean;
  reason: WebhookVerifyReason;
}

export interface WebhookVerifyOptions {
  /** Maximum |now − timestamp| in seconds (inclusive). Default 300. */
  toleranceSeconds?: number;
  /** The receiver's current time in UNIX SECONDS. Default: the system clock. */
  now?: number;
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Verifies an incoming Herald webhook. Pass the raw body exactly as received (before any JSON parsing).
 *
 * Hex case: Herald sends lowercase hex; the signature is compared after trimming and lowercasing, so an
 * upper-case (or mixed-case) rendering of the correct digest is accepted. Anything that is not exactly
 * 64 hex digits is `malformed_signature`. The comparison itself is constant-time (timingSafeEqual on
 * equal-length buffers). A timestamp more than `toleranceSeconds` away in EITHER direction is stale.
 * During secret rotation call this once per candidate secret (current, then previous).
 */
export function verifyWebhookSignature(
  secret: string,
  timestamp: number | string | null | undefined,
  rawBody: RawBody,
  signature: string | null | undefined,
  options: WebhookVerifyOptions = {},
): WebhookVerifyResult {
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const now = options.now ?? unixSeconds();
  if (signature === null || signature === undefined || signature.trim() === "") {
    return { valid: false, reason: "missing_signature" };
  }
  const tsText = timestamp === null || timestamp === undefined ? "" : String(timestamp).trim();
  if (!/^\d{1,15}$/.test(tsText)) return { valid: false, reason: "invalid_timestamp" };
  const ts = Number(tsText);
  if (Math.abs(now - ts) > toleranceSeconds) return { valid: false, reason: "stale_timestamp" };

  const given = signature.trim().toLowerCase();
  if (!HEX64.test(given)) return { valid: false, reason: "malformed_signature" };
  const expected = webhookSignature(secret, tsText, rawBody);
  const a = Buffer.from(given, "hex");
  const b = Buffer.from(expected, "hex");
  const equal = a.length === b.length && timingSafeEqual(a, b);
  return equal ? { valid: true, reason: "ok" } : { valid: false, reason: "signature_mismatch" };
}
