import { createHash } from "node:crypto";
import { httpDate, notModifiedSince, strongEtag } from "../http/caching/conditional";
import { metaRequested } from "../http/envelope";

// Validators for every transparency GET: Cache-Control public, max-age=60 (the spec: cache snapshots ≥ 60 s),
// a strong ETag and Last-Modified, and 304 on If-None-Match (which wins, RFC 9110 §13.2.2) or, without it,
// If-Modified-Since. Bodies carry no request time (generated_at_utc is the time the data last changed), so the
// same data gives the same bytes and the same ETag. A streamed export cannot hash bytes it has not produced: its
// ETag hashes what fully determines them (the audit data version and the normalised query) instead.

export const CACHE_CONTROL = "public, max-age=60";

/** The answer's context: the request, the data time, and the headers Elysia's `set` collected (request id…). */
export interface AnswerContext {
  request: Request;
  /** ISO time of the last change of the data behind the answer. */
  lastModified: string;
  /** X-Request-ID and rate-limit headers the core set for this request. */
  headers: Record<string, unknown>;
}

function headersOf(a: AnswerContext, etag: string, contentType: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(a.headers)) if (typeof v === "string") out[k] = v;
  out["cache-control"] = CACHE_CONTROL;
  out.etag = etag;
  out["last-modified"] = httpDate(a.lastModified);
  if (contentType) out["content-type"] = contentType;
  return out;
}

/** A body of known bytes: 304 or 200 with a strong ETag over exactly those bytes. */
export function answerBytes(
  a: AnswerContext,
  bytes: string | Uint8Array,
  contentType: string,
  extra: Record<string, string> = {},
  knownEtag?: string,
): Response {
  const etag = knownEtag ?? strongEtag(bytes);
  if (notModifiedSince(a.request, etag, a.lastModified)) return new Response(null, { status: 304, headers: headersOf(a, etag, null) });
  return new Response(bytes, { headers: { ...headersOf(a, etag, contentType), ...extra } });
}

/** JSON: `{ success: true, ...body }`, with include_meta's block when asked for (that answer's ETag is its own). */
export function answerJson(a: AnswerContext, body: Record<string, unknown>, now: () => Date): Response {
  const full: Record<string, unknown> = { success: true, ...body };
  if (metaRequested(a.request.url)) full.meta = { request_id: String(a.headers["x-request-id"] ?? "unknown"), generated_at_utc: now().toISOString() };
  return answerBytes(a, JSON.stringify(full), "application/json;charset=utf-8");
}

/**
 * A streamed body. `seed` must determine the bytes completely (data version + normalised query). Compressed
 * here, as it streams, when the client accepts gzip: buffering a million rows to compress them whole is what
 * streaming avoids (the core's compression leaves a body with Content-Encoding alone).
 */
export function answerStream(a: AnswerContext, seed: string, contentType: string, make: () => ReadableStream<Uint8Array>, filename?: string): Response {
  const etag = `"s-${createHash("sha256").update(seed).digest("base64url")}"`;
  if (notModifiedSince(a.request, etag, a.lastModified)) return new Response(null, { status: 304, headers: headersOf(a, etag, null) });
  const headers = headersOf(a, etag, contentType);
  if (filename) headers["content-disposition"] = `inline; filename="${filename}"`;
  const accepts = a.request.headers.get("accept-encoding") ?? "";
  let body = make();
  if (/\bgzip\b/i.test(accepts) && !/\bgzip\s*;\s*q=0(\.0*)?\b/i.test(accepts)) {
    body = body.pipeThrough(new CompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>);
    headers["content-encoding"] = "gzip";
    headers.vary = "Accept-Encoding";
    // The compressed bytes differ from the ones the tag names; a weak tag says so (as src/http/compression.ts does).
    headers.etag = `W/${etag}`;
  }
  return new Response(body, { headers });
}

/**
 * Finished answers of the audit routes by request target, valid for one audit data version (state.ts: how each
 * request takes it, another instance's changes included). Bounded (oldest dropped first); per-process memory, which
 * docs/design.md §8 allows for caches.
 */
export class AnswerCache {
  private readonly entries = new Map<string, { version: number; body: Uint8Array; etag: string; contentType: string; extra: Record<string, string> }>();
  constructor(private readonly maxEntries = 512) {}

  async answer(a: AnswerContext, version: number, contentType: string, build: () => Promise<string>, extra: Record<string, string> = {}): Promise<Response> {
    const url = a.request.url;
    const key = url.slice(url.indexOf("/", 8));
    let hit = this.entries.get(key);
    if (!hit || hit.version !== version) {
      // Kept encoded: a 30 KB runs.json is not re-encoded to UTF-8 on every request.
      const body = new TextEncoder().encode(await build());
      hit = { version, body, etag: strongEtag(body), contentType, extra };
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, hit);
    }
    return answerBytes(a, hit.body, hit.contentType, hit.extra, hit.etag);
  }
}
