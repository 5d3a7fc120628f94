import { createHash } from "node:crypto";

/**
 * Conditional GET for representations that change only when the process does (the OpenAPI documents, the docs
 * pages and their bundled assets): a strong ETag computed once over the exact bytes, and 304 Not Modified when
 * If-None-Match names it, so a client that has the document re-downloads nothing (1.1 MB of YAML) until a
 * deploy changes it.
 */
export interface Representation {
  readonly body: Uint8Array | Blob;
  readonly size: number;
  /** Strong entity tag: `"<base64url sha-256 of the bytes>"`. */
  readonly etag: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** Strong ETag of some bytes (RFC 9110 §8.8.3): quoted, and equal exactly when the bytes are. */
export function strongEtag(bytes: Uint8Array | string): string {
  return `"${createHash("sha256").update(bytes).digest("base64url")}"`;
}

/** A representation whose validator is computed now: call once per process, not per request. */
export function representation(body: Uint8Array | string, contentType: string, cacheControl: string): Representation {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const etag = strongEtag(bytes);
  return { body: bytes, size: bytes.byteLength, etag, headers: { "content-type": contentType, etag, "cache-control": cacheControl } };
}

/** A file (a UI bundle embedded in the binary), hashed once when first asked for. */
export async function fileRepresentation(file: Blob, contentType: string, cacheControl: string): Promise<Representation> {
  return { ...representation(new Uint8Array(await file.arrayBuffer()), contentType, cacheControl), body: file };
}

/**
 * Whether If-None-Match matches `etag`. RFC 9110 §13.1.2: `*` matches any current representation, and the
 * list is compared weakly (a `W/` prefix is ignored), so a cache that weakened our tag still revalidates.
 */
export function ifNoneMatchHits(header: string | null | undefined, etag: string): boolean {
  if (!header) return false;
  const value = header.trim();
  if (value === "*") return true;
  const opaque = etag.replace(/^W\//, "");
  // Entity tags are quoted strings that cannot contain `"`, so splitting on commas outside quotes is exact.
  for (const m of value.matchAll(/(?:W\/)?"[^"]*"/g)) if (m[0].replace(/^W\//, "") === opaque) return true;
  return false;
}

/**
 * The answer to a GET of `rep`: 304 with the validator and caching headers (RFC 9110 §15.4.5 asks a
 * 304 to carry the ETag and Cache-Control a 200 would) when If-None-Match hits, else 200 with the bytes and `extra`
 * (a page's security headers, a download's file name).
 */
export function conditionalResponse(request: Request, rep: Representation, extra?: Readonly<Record<string, string>>): Response {
  if (ifNoneMatchHits(request.headers.get("if-none-match"), rep.etag)) {
    const { "content-type": _type, ...headers } = rep.headers;
    return new Response(null, { status: 304, headers });
  }
  return new Response(rep.body, { headers: extra ? { ...rep.headers, ...extra } : rep.headers });
}

/** RFC 9110 HTTP-date of an ISO time, to the second. */
export const httpDate = (iso: string) => new Date(Math.floor(Date.parse(iso) / 1000) * 1000).toUTCString();

/**
 * Whether a conditional GET may be answered 304: If-None-Match when sent (it wins, RFC 9110 §13.2.2; an answer
 * without an ETag, `etag` null, then never matches), else If-Modified-Since against the data time (to the
 * second). The one rule of every validator-backed route.
 */
export function notModifiedSince(request: Request, etag: string | null, lastModifiedIso: string): boolean {
  const inm = request.headers.get("if-none-match");
  if (inm !== null) return etag !== null && ifNoneMatchHits(inm, etag);
  const ims = request.headers.get("if-modified-since");
  if (!ims) return false;
  const since = Date.parse(ims);
  return !Number.isNaN(since) && Math.floor(Date.parse(lastModifiedIso) / 1000) * 1000 <= since;
}

/**
 * A JSON answer computed per request (a public snapshot), with validators: a strong ETag over the exact bytes,
 * Last-Modified = the data time, Cache-Control, and 304 when the client's copy is current. `headers` are the
 * ones the core already set for this request (X-Request-ID, rate limits), carried onto the Response.
 */
export function conditionalJson(request: Request, body: object, opts: Omit<BytesOptions, "contentType" | "extra">): Response {
  return conditionalBytes(request, JSON.stringify(body), { ...opts, contentType: "application/json;charset=utf-8" });
}

type BytesOptions = { lastModified: string; cacheControl: string; contentType: string; headers?: Record<string, unknown>; extra?: Record<string, string> };

/** conditionalJson for any body already written (a CSV twin): its content type and any extra headers (a filename). */
export function conditionalBytes(request: Request, body: string | Uint8Array, opts: BytesOptions): Response {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const etag = strongEtag(bytes);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === "string") headers[k] = v;
  Object.assign(headers, { etag, "last-modified": httpDate(opts.lastModified), "cache-control": opts.cacheControl });
  if (notModifiedSince(request, etag, opts.lastModified)) return new Response(null, { status: 304, headers });
  return new Response(bytes, { headers: { ...headers, "content-type": opts.contentType, ...opts.extra } });
}

/**
 * Dates a document that is computed per request by the last change of its content rather than by the request.
 * Such a document (trust.json, the trust dashboard, wallet concentration) says `generated_at_utc`; were that the
 * request time, every answer would have new bytes, a new ETag and a new Last-Modified, and no client would ever
 * get a 304. Here it is the time this process first produced the same content (everything but generated_at_utc),
 * so the bytes, the strong ETag and Last-Modified change exactly when the data does. Per-process memory (a cache,
 * docs/design.md §8): another instance may date the same content a little differently, so its ETag differs.
 */
export class ContentDates {
  private readonly seen = new Map<string, { fingerprint: string; at: string }>();
  constructor(private readonly maxEntries = 64) {}

  stamp<T extends { generated_at_utc: string }>(key: string, doc: T): T {
    const { generated_at_utc: at, ...content } = doc;
    const fingerprint = createHash("sha256").update(JSON.stringify(content)).digest("base64url");
    const last = this.seen.get(key);
    if (last?.fingerprint === fingerprint) return { ...doc, generated_at_utc: last.at };
    if (!last && this.seen.size >= this.maxEntries) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(key, { fingerprint, at });
    return doc;
  }
}
