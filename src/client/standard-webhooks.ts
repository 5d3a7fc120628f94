/**
 * Standard Webhooks (https://www.standardwebhooks.com) signatures, which Herald sends beside its own
 * X-Webhook-Signature so partners can verify with the standard libraries:
 *
 *   webhook-id: <event id>   webhook-timestamp: <unix seconds>
 *   webhook-signature: v1,<base64(HMAC-SHA256(key, id + "." + timestamp + "." + raw_body))>[ v1,<…previous secret>]
 *
 * The key: the standard writes secrets as `whsec_` + base64(key bytes), and its libraries base64-decode what
 * they are given. Herald's secrets are opaque strings (`whsec_…`, used as-is as the HMAC key of
 * X-Webhook-Signature, docs/design.md §6), so the Standard Webhooks key is the SAME bytes: the secret's UTF-8
 * bytes. One secret, one key, both schemes. A standard library therefore takes either the secret in "raw"
 * form (`new Webhook(secret, { format: "raw" })` in JS) or `standardWebhooksSecret(secret)` = base64 of it.
 *
 * Standalone, like the rest of this folder: node:crypto only.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { RawBody } from "./sign.js";

/** The Herald secret as the Standard Webhooks libraries take it (base64 of its UTF-8 bytes, no prefix). */
export function standardWebhooksSecret(secret: string): string {
  return Buffer.from(secret, "utf8").toString("base64");
}

/** One `v1,<base64>` signature over `${msgId}.${timestamp}.${rawBody}`, keyed by the secret's UTF-8 bytes. */
export function standardWebhookSignature(secret: string, msgId: string, timestamp: number | string, rawBody: RawBody): string {
  const mac = createHmac("sha256", secret).update(`${msgId}.${timestamp}.`);
  mac.update(rawBody);
  return `v1,${mac.digest("base64")}`;
}

/** Headers as Fetch gives them, or as Node's `req.headers` (lower-case keys) or any plain record. */
export type HeadersLike = Headers | Record<string, string | readonly string[] | undefined | null>;

/** The value of one header, case-insensitively; a repeated header's values joined with ", " as Fetch does. */
export function headerValue(headers: HeadersLike, name: string): string | null {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  const wanted = name.toLowerCase();
  for (const [k, v] of Object.entries(headers as Record<string, string | readonly string[] | undefined | null>)) {
    if (k.toLowerCase() !== wanted || v === undefined || v === null) continue;
    return typeof v === "string" ? v : v.join(", ");
  }
  return null;
}

export type StandardVerifyReason = "missing_headers" | "invalid_timestamp" | "stale_timestamp" | "signature_mismatch";

export type StandardVerifyResult = { valid: true; reason: "ok"; secretIndex: number } | { valid: false; reason: StandardVerifyReason };

export interface StandardVerifyOptions {
  /** Maximum |now − webhook-timestamp| in seconds (inclusive). Default 300, as the standard's libraries. */
  toleranceSeconds?: number;
  /** The receiver's current time in UNIX SECONDS. Default: the system clock. */
  now?: number;
}

/**
 * Verifies `webhook-signature` against every secret you hold (the current one first while you switch over
 * after a rotation). Herald sends one `v1,` entry per secret it signs with, space-separated; any one match is
 * enough. Entries of other versions are ignored, as the standard asks. Comparison is constant-time.
 */
export function verifyStandardWebhook(
  secrets: string | readonly string[],
  headers: HeadersLike,
  rawBody: RawBody,
  options: StandardVerifyOptions = {},
): StandardVerifyResult {
  const id = headerValue(headers, "webhook-id");
  const tsText = headerValue(headers, "webhook-timestamp")?.trim() ?? "";
  const signatures = headerValue(headers, "webhook-signature");
  if (!id || !tsText || !signatures) return { valid: false, reason: "missing_headers" };
  if (!/^\d{1,15}$/.test(tsText)) return { valid: false, reason: "invalid_timestamp" };
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(tsText)) > (options.toleranceSeconds ?? 300)) return { valid: false, reason: "stale_timestamp" };

  const given = signatures
    .split(" ")
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => Buffer.from(entry.slice(3), "base64"));
  const list = typeof secrets === "string" ? [secrets] : secrets;
  for (let i = 0; i < list.length; i++) {
    const expected = Buffer.from(standardWebhookSignature(list[i]!, id, tsText, rawBody).slice(3), "base64");
    if (given.some((g) => g.length === expected.length && timingSafeEqual(g, expected))) return { valid: true, reason: "ok", secretIndex: i };
  }
  return { valid: false, reason: "signature_mismatch" };
}
