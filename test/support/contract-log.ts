// Records what the app answers, for the contract check (.ci/check-contract.ts): with HERALD_CONTRACT_LOG set to a
// file, every exchange a test app (test/support/app.ts) or a served target (test/support/target.ts) makes is
// appended there as one JSON line — method, path, status, response headers and body (up to a bound) — and the
// check validates each against the served OpenAPI document afterwards. Unset, nothing is recorded.
import { appendFileSync } from "node:fs";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";

const LOG = process.env.HERALD_CONTRACT_LOG || null;
/** Bodies above this are recorded without their text (the check then looks at the status, media type and headers). */
const MAX_BODY_CHARS = 256 * 1024;

export interface Exchange {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  /** The body as text; null when it was too long, binary or a stream that does not end. */
  body: string | null;
  /** The body's length in bytes. */
  bytes: number;
  /** The request's credential headers by name (never their values), for the security check. */
  sent: string[];
}

const TEXTUAL = /^(application\/(json|[a-z.+-]*\+json|yaml|x-ndjson|xml|rss\+xml|atom\+xml|feed\+json)|text\/(?!event-stream))/i;
const CREDENTIALS = ["authorization", "x-partner-key", "x-partner-signature", "x-telegram-bot-api-secret-token", "x-messenger-bot-api-secret-token", "cookie"];

export const contractLogging = LOG !== null;

/** Appends the exchange of `request` and `response` to the log; the response handed back is one the caller may read. */
export async function recordExchange(request: { method: string; url: string; headers: { has(name: string): boolean } }, response: Response): Promise<Response> {
  if (!LOG) return response;
  const url = new URL(request.url);
  const type = response.headers.get("content-type") ?? "";
  let body: string | null = null;
  let bytes = 0;
  const readable = request.method !== "HEAD" && response.body !== null && !/event-stream/i.test(type);
  if (readable) {
    let buffer = new Uint8Array(await response.clone().arrayBuffer());
    // In process the body is as sent (compressed); fetch has already decoded a served one, so decoding may fail.
    const decode = { gzip: gunzipSync, br: brotliDecompressSync, deflate: inflateSync }[response.headers.get("content-encoding") ?? ""];
    if (decode) {
      try {
        buffer = new Uint8Array(decode(buffer));
      } catch {
        // already decoded
      }
    }
    bytes = buffer.byteLength;
    if (TEXTUAL.test(type) && bytes <= MAX_BODY_CHARS) body = new TextDecoder().decode(buffer);
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  const sent = CREDENTIALS.filter((name) => request.headers.has(name));
  const line: Exchange = { method: request.method, path: url.pathname, status: response.status, headers, body, bytes, sent };
  appendFileSync(LOG, `${JSON.stringify(line)}\n`);
  return response;
}
