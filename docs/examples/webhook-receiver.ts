/**
 * A complete Herald webhook receiver (Bun). Copy it, replace `handleEvent`, run it:
 *
 *   WEBHOOK_SECRET=whsec_… PORT=8080 bun run webhook-receiver.ts
 *   # during a secret rotation, until every sender uses the new secret:
 *   WEBHOOK_SECRET=whsec_new… WEBHOOK_SECRET_PREVIOUS=whsec_old… PORT=8080 bun run webhook-receiver.ts
 *
 * What it does, in order, for every POST:
 *   1. reads the RAW body bytes (the signature covers these exact bytes, never a re-serialised JSON);
 *   2. refuses a timestamp more than 300 s from its own clock (a replayed capture is useless after that);
 *   3. checks X-Webhook-Signature (and X-Webhook-Signature-Previous, sent while Herald's side of a rotation
 *      overlaps) against each secret it holds, in constant time;
 *   4. drops an event id it has already accepted (Herald delivers at least once: retries, replays and a
 *      crashed sender can repeat an event, always with the same X-Webhook-Id);
 *   5. answers 200 at once and does the work afterwards, so a slow handler never turns into a timeout and a
 *      retry.
 *
 * Standalone on purpose: it imports only node:crypto (Bun, or Node ≥ 18 with a small server adapter).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Largest accepted |receiver clock − X-Webhook-Timestamp|, in seconds. */
export const TOLERANCE_SECONDS = 300;
/** How long an accepted event id is remembered. Herald asks for at least 24 h; 48 h is safer. */
export const DEDUPE_HOURS = 48;

export type VerifyFailure = "missing_headers" | "invalid_timestamp" | "stale_timestamp" | "malformed_signature" | "signature_mismatch";
export type VerifyResult = { ok: true; matched: "signature" | "signature_previous"; secretIndex: number } | { ok: false; reason: VerifyFailure };

export interface VerifyInput {
  /** The body exactly as received. A string is taken as its UTF-8 bytes. */
  rawBody: string | Uint8Array;
  /** X-Webhook-Timestamp (unix seconds). */
  timestamp: string | null | undefined;
  /** X-Webhook-Signature (64 lowercase hex digits). */
  signature: string | null | undefined;
  /** X-Webhook-Signature-Previous, present while a rotation overlaps on Herald's side. */
  signaturePrevious?: string | null;
  /** Every secret this receiver accepts: the current one first, the previous one while you switch over. */
  secrets: readonly string[];
  /** Your clock, unix seconds (default: now). */
  nowSeconds?: number;
  toleranceSeconds?: number;
}

/** hex(HMAC-SHA256(secret, timestamp + "." + raw_body)) over the exact bytes. */
export function expectedSignature(secret: string, timestamp: string, rawBody: string | Uint8Array): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex");
}

const HEX64 = /^[0-9a-f]{64}$/;

/** Verifies one delivery. Constant-time comparison; never throws on hostile input. */
export function verifyWebhook(input: VerifyInput): VerifyResult {
  const ts = input.timestamp?.trim() ?? "";
  if (!ts || !input.signature) return { ok: false, reason: "missing_headers" };
  if (!/^\d{1,15}$/.test(ts)) return { ok: false, reason: "invalid_timestamp" };
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(ts)) > (input.toleranceSeconds ?? TOLERANCE_SECONDS)) return { ok: false, reason: "stale_timestamp" };
  const provided = [
    ["signature", input.signature],
    ["signature_previous", input.signaturePrevious],
  ] as const;
  let wellFormed = false;
  for (const [which, value] of provided) {
    const given = value?.trim().toLowerCase() ?? "";
    if (!HEX64.test(given)) continue;
    wellFormed = true;
    const givenBytes = Buffer.from(given, "hex");
    for (let i = 0; i < input.secrets.length; i++) {
      const expected = Buffer.from(expectedSignature(input.secrets[i]!, ts, input.rawBody), "hex");
      if (timingSafeEqual(givenBytes, expected)) return { ok: true, matched: which, secretIndex: i };
    }
  }
  return { ok: false, reason: wellFormed ? "signature_mismatch" : "malformed_signature" };
}

/** The envelope Herald POSTs. `sandbox: true` only on deliveries of sandbox keys. */
export interface HeraldEvent {
  event_id: string;
  event_type: string;
  data: Record<string, unknown>;
  sandbox?: true;
}

/**
 * Remembers accepted event ids for `ttlMs` (in memory). Entries expire in insertion order, so pruning is cheap.
 * In production keep them where your side effects live — a table with a UNIQUE event_id written in the same
 * transaction as the work — so that a restart or a second instance does not forget them.
 */
export class SeenIds {
  private readonly seen = new Map<string, number>();
  constructor(private readonly ttlMs = DEDUPE_HOURS * 3_600_000) {}

  /** True the first time an id is claimed (within the TTL), false for a duplicate. */
  claim(id: string, nowMs = Date.now()): boolean {
    for (const [oldId, at] of this.seen) {
      if (nowMs - at < this.ttlMs) break;
      this.seen.delete(oldId);
    }
    if (this.seen.has(id)) return false;
    this.seen.set(id, nowMs);
    return true;
  }

  /** Forget an id whose processing failed, so that a replay of it is processed. */
  release(id: string): void {
    this.seen.delete(id);
  }
}

export interface ReceiverOptions {
  secrets: readonly string[];
  /** Your work. Runs after the 200 went out; a throw releases the id so a replay is processed. */
  handleEvent: (event: HeraldEvent, delivery: { timestamp: string; rawBody: string }) => void | Promise<void>;
  /** Unix seconds (default: the system clock). */
  now?: () => number;
  seen?: SeenIds;
  maxBodyBytes?: number;
  log?: (line: Record<string, unknown>) => void;
}

const json = (status: number, body: Record<string, unknown>) => Response.json(body, { status });

/** The request handler: give it to Bun.serve, or call it from any framework that hands you a Request. */
export function createWebhookHandler(opts: ReceiverOptions): (req: Request) => Promise<Response> {
  const seen = opts.seen ?? new SeenIds();
  const maxBody = opts.maxBodyBytes ?? 1024 * 1024;
  const log = opts.log ?? ((line) => console.log(JSON.stringify(line)));
  return async (req) => {
    if (req.method !== "POST") return json(405, { error: "method_not_allowed" });
    const bytes = new Uint8Array(await req.arrayBuffer());
    if (bytes.byteLength > maxBody) return json(413, { error: "payload_too_large" });

    const result = verifyWebhook({
      rawBody: bytes,
      timestamp: req.headers.get("x-webhook-timestamp"),
      signature: req.headers.get("x-webhook-signature"),
      signaturePrevious: req.headers.get("x-webhook-signature-previous"),
      secrets: opts.secrets,
      nowSeconds: opts.now?.(),
    });
    // 401: Herald retries, and after the last attempt you can replay the dead letter once the secret is fixed.
    if (!result.ok) return json(401, { error: result.reason });

    const rawBody = new TextDecoder().decode(bytes);
    let event: HeraldEvent;
    try {
      event = JSON.parse(rawBody) as HeraldEvent;
    } catch {
      return json(400, { error: "invalid_json" });
    }
    const id = req.headers.get("x-webhook-id") ?? event.event_id;
    if (id !== event.event_id) return json(400, { error: "event_id_mismatch" });
    if (!seen.claim(id)) return json(200, { received: true, duplicate: true });

    // Answer now; work afterwards. (If the work must not be lost when this process dies, write the event to a
    // durable queue or table here, before answering, and process it from there.)
    const timestamp = req.headers.get("x-webhook-timestamp")!;
    setTimeout(() => {
      Promise.resolve()
        .then(() => opts.handleEvent(event, { timestamp, rawBody }))
        .catch((err) => {
          seen.release(id);
          log({ level: "error", msg: "webhook handler failed", event_id: id, error: String(err) });
        });
    }, 0);
    return json(200, { received: true });
  };
}

/** Starts the receiver with Bun.serve; `port: 0` picks a free port (tests). */
export function startWebhookReceiver(opts: ReceiverOptions & { port?: number; hostname?: string; path?: string }) {
  const handle = createWebhookHandler(opts);
  const path = opts.path ?? "/webhooks/herald";
  return Bun.serve({
    port: opts.port ?? 8080,
    hostname: opts.hostname ?? "0.0.0.0",
    maxRequestBodySize: (opts.maxBodyBytes ?? 1024 * 1024) + 1,
    fetch: (req) => (new URL(req.url).pathname === path ? handle(req) : json(404, { error: "not_found" })),
  });
}

/** Your business logic. Unknown event types: accept and ignore (Herald adds types over time). */
async function handleEvent(event: HeraldEvent): Promise<void> {
  switch (event.event_type) {
    case "salutes.credit":
    case "salutes.debit":
      console.log(JSON.stringify({ msg: "balance changed", event_id: event.event_id, sandbox: event.sandbox === true, data: event.data }));
      break;
    case "webhook.delivery_failed":
      console.log(JSON.stringify({ msg: "a delivery to another of our receivers was dead-lettered", data: event.data }));
      break;
    default:
      break;
  }
}

if (import.meta.main) {
  const secrets = [process.env.WEBHOOK_SECRET, process.env.WEBHOOK_SECRET_PREVIOUS].filter((s): s is string => !!s);
  if (secrets.length === 0) {
    console.error("set WEBHOOK_SECRET (the secret Herald returned when you created the webhook)");
    process.exit(1);
  }
  const server = startWebhookReceiver({ secrets, handleEvent, port: Number(process.env.PORT ?? 8080) });
  console.log(`listening on http://${server.hostname}:${server.port}/webhooks/herald`);
}
