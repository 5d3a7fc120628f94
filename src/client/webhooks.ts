/**
 * One call for a webhook receiver: verify a Herald delivery by either of the two signatures it carries and
 * return the parsed envelope. Herald signs every delivery twice over the same raw bytes with the same secret:
 * X-Webhook-Signature (docs/design.md §6) and Standard Webhooks' webhook-signature (./standard-webhooks.ts).
 */
import { type RawBody, verifyWebhookSignature } from "./sign.js";
import { headerValue, type HeadersLike, verifyStandardWebhook } from "./standard-webhooks.js";

/** The body Herald POSTs: one event per request. `sandbox: true` only on sandbox-mode deliveries. */
export interface HeraldWebhookEvent<Data = Record<string, unknown>> {
  event_id: string;
  event_type: string;
  data: Data;
  sandbox?: true;
}

export type WebhookFailureReason = "missing_headers" | "invalid_timestamp" | "stale_timestamp" | "malformed_signature" | "signature_mismatch" | "invalid_body";

export type VerifyWebhookResult =
  | { valid: true; scheme: "standard-webhooks" | "x-webhook-signature"; secretIndex: number; event: HeraldWebhookEvent }
  | { valid: false; reason: WebhookFailureReason };

export interface VerifyWebhookInput {
  /** The body exactly as received, before any JSON parsing (a string is taken as its UTF-8 bytes). */
  rawBody: RawBody;
  /** The request's headers (Fetch `Headers`, Node's `req.headers`, or a plain record). */
  headers: HeadersLike;
  /** Every secret you accept: the current one first, the previous one while you switch over after a rotation. */
  secrets: string | readonly string[];
  /** Maximum |now − timestamp| in seconds (inclusive). Default 300. */
  toleranceSeconds?: number;
  /** The receiver's current time in UNIX SECONDS. Default: the system clock. */
  now?: number;
}

/**
 * Verifies a delivery and parses its envelope. The Standard Webhooks headers are checked when present (their
 * signature also covers the id); otherwise X-Webhook-Signature and, during Herald's rotation overlap,
 * X-Webhook-Signature-Previous. Never throws: a refusal carries its reason (answer it with 400 or 401).
 */
export function verifyWebhook(input: VerifyWebhookInput): VerifyWebhookResult {
  const secrets = typeof input.secrets === "string" ? [input.secrets] : input.secrets;
  const options = { toleranceSeconds: input.toleranceSeconds, now: input.now };
  let found: { scheme: "standard-webhooks" | "x-webhook-signature"; secretIndex: number } | null = null;

  if (headerValue(input.headers, "webhook-signature") !== null) {
    const r = verifyStandardWebhook(secrets, input.headers, input.rawBody, options);
    if (!r.valid) return { valid: false, reason: r.reason };
    found = { scheme: "standard-webhooks", secretIndex: r.secretIndex };
  } else {
    const timestamp = headerValue(input.headers, "x-webhook-timestamp");
    const candidates = [headerValue(input.headers, "x-webhook-signature"), headerValue(input.headers, "x-webhook-signature-previous")].filter(
      (s): s is string => s !== null && s !== "",
    );
    if (timestamp === null || candidates.length === 0) return { valid: false, reason: "missing_headers" };
    let last: WebhookFailureReason = "signature_mismatch";
    for (let i = 0; i < secrets.length && !found; i++) {
      for (const signature of candidates) {
        const r = verifyWebhookSignature(secrets[i]!, timestamp, input.rawBody, signature, options);
        if (r.valid) {
          found = { scheme: "x-webhook-signature", secretIndex: i };
          break;
        }
        // A stale or malformed timestamp is the same for every secret: report it rather than "mismatch".
        if (r.reason !== "signature_mismatch") last = r.reason as WebhookFailureReason;
      }
    }
    if (!found) return { valid: false, reason: last };
  }

  const text = typeof input.rawBody === "string" ? input.rawBody : new TextDecoder().decode(input.rawBody);
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    return { valid: false, reason: "invalid_body" };
  }
  const e = event as Partial<HeraldWebhookEvent> | null;
  if (!e || typeof e !== "object" || typeof e.event_id !== "string" || typeof e.event_type !== "string") return { valid: false, reason: "invalid_body" };
  return { ...found, valid: true, event: e as HeraldWebhookEvent };
}

/** Thrown by verifyWebhookOrThrow; `reason` says which check failed. */
export class HeraldWebhookError extends Error {
  override readonly name = "HeraldWebhookError";
  constructor(readonly reason: WebhookFailureReason) {
    super(`Herald webhook refused: ${reason}`);
  }
}

/** verifyWebhook, returning the event or throwing HeraldWebhookError. */
export function verifyWebhookOrThrow(input: VerifyWebhookInput): HeraldWebhookEvent {
  const r = verifyWebhook(input);
  if (!r.valid) throw new HeraldWebhookError(r.reason);
  return r.event;
}
