import { webhookSignature } from "../client/sign";
import { standardWebhookSignature } from "../client/standard-webhooks";

export const MAX_RESPONSE_BYTES = 64 * 1024;
export const EXCERPT_BYTES = 1024;

export type ReasonTag = "http_error" | "timeout" | "connection_error" | "blocked_target";

export interface SendInput {
  url: string;
  eventPublicId: string;
  eventType: string;
  /** Exact bytes sent; the signature covers these, never a re-serialisation. */
  body: string;
  timestampSeconds: number;
  secret: string;
  previousSecret: string | null;
  timeoutMs: number;
}

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  reasonTag: ReasonTag | null;
  error: string | null;
  excerpt: string | null;
  retryAfter: string | null;
  durationMs: number;
}

/** An attempt that got no answer to record: refused before it left, timed out, or its connection failed. */
export const sendFailure = (reasonTag: ReasonTag, error: string, durationMs = 0): SendResult => ({
  ok: false,
  statusCode: null,
  reasonTag,
  error,
  excerpt: null,
  retryAfter: null,
  durationMs,
});

/**
 * Every delivery carries two signatures over the same raw body, keyed by the same secret bytes: Herald's own
 * X-Webhook-* headers (docs/design.md §6) and the Standard Webhooks headers (webhook-id = the event id, stable across
 * retries and replays; webhook-timestamp = this attempt's time; webhook-signature = "v1,<base64>"), so a
 * partner can verify with the standard libraries (docs/webhooks.md, src/client/standard-webhooks.ts).
 */
export function deliveryHeaders(input: Omit<SendInput, "url" | "timeoutMs">): Record<string, string> {
  const ts = String(input.timestampSeconds);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "Herald-Webhooks/1",
    "x-webhook-id": input.eventPublicId,
    "x-webhook-event": input.eventType,
    "x-webhook-timestamp": ts,
    "x-webhook-signature": webhookSignature(input.secret, ts, input.body),
    "webhook-id": input.eventPublicId,
    "webhook-timestamp": ts,
    "webhook-signature": standardWebhookSignature(input.secret, input.eventPublicId, ts, input.body),
  };
  // During a secret rotation the old secret signs too, so a receiver can switch at its own pace (as Stripe/Svix):
  // in its own header for X-Webhook-*, and as a second space-separated entry as the standard provides.
  if (input.previousSecret) {
    headers["x-webhook-signature-previous"] = webhookSignature(input.previousSecret, ts, input.body);
    headers["webhook-signature"] += ` ${standardWebhookSignature(input.previousSecret, input.eventPublicId, ts, input.body)}`;
  }
  return headers;
}

/** Reads at most MAX_RESPONSE_BYTES of the receiver's answer; a huge or endless body cannot hold a worker. */
async function readBounded(res: Response): Promise<string> {
  if (!res.body) return "";
  // An answer that declares its length within the bound, not compressed (fetch would inflate it past its length),
  // is read in one call: the reader's loop cost ~4–8 µs more CPU an answer (a 2-byte body, fetch and Bun.serve in
  // one process on 127.0.0.1: 24–28 µs a request against 20 µs).
  const length = res.headers.get("content-length");
  if (length !== null && /^\d{1,6}$/.test(length) && Number(length) <= MAX_RESPONSE_BYTES && !res.headers.has("content-encoding")) {
    return new TextDecoder().decode(new Uint8Array(await res.arrayBuffer()).subarray(0, EXCERPT_BYTES));
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (let i = 0; i < 10_000; i++) {
      const { done, value } = await reader.read();
      if (done || !value) break;
      chunks.push(value);
      size += value.byteLength;
      if (size >= MAX_RESPONSE_BYTES) break;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, EXCERPT_BYTES));
}

/** One HTTP attempt. Redirects are not followed: a 3xx is a failure the partner should fix. */
export async function sendDelivery(input: SendInput): Promise<SendResult> {
  const started = performance.now();
  const signal = AbortSignal.timeout(input.timeoutMs);
  const elapsedMs = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(input.url, { method: "POST", headers: deliveryHeaders(input), body: input.body, redirect: "manual", signal });
    const excerpt = await readBounded(res);
    const ok = res.status >= 200 && res.status < 300;
    return {
      ok,
      statusCode: res.status,
      reasonTag: ok ? null : "http_error",
      error: ok ? null : `receiver answered HTTP ${res.status}${res.status >= 300 && res.status < 400 ? " (redirects are not followed)" : ""}`,
      excerpt,
      retryAfter: res.headers.get("retry-after"),
      durationMs: elapsedMs(),
    };
  } catch (err) {
    const name = (err as Error).name;
    if (name === "TimeoutError" || name === "AbortError" || signal.aborted) {
      return sendFailure("timeout", `no complete answer within ${input.timeoutMs / 1000} s`, elapsedMs());
    }
    const code = (err as NodeJS.ErrnoException).code;
    return sendFailure("connection_error", `connection failed${code ? ` (${code})` : ""}: ${(err as Error).message}`.slice(0, 500), elapsedMs());
  }
}
