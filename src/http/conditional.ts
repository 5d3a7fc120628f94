import { createHash } from "node:crypto";

/**
 * Conditional GET for representations that change only when the process does (the OpenAPI documents, the docs
 * pages and their bundled assets): a strong ETag computed once over the exact bytes, and 304 Not Modified when
 * If-None-Match names it, so a client that has the document re-downloads nothing (1.1 MB of YAML) until a
 * deploy changes it.
 */
export interface Representation {
  readonly body: Uint8Array | Blob;
  /** Bytes of the body. */
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
  const etag = strongEtag(new Uint8Array(await file.arrayBuffer()));
  return { body: file, size: file.size, etag, headers: { "content-type": contentType, etag, "cache-control": cacheControl } };
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
 * 304 to carry the ETag and Cache-Control a 200 would) when If-None-Match hits, else 200 with the bytes.
 */
export function conditionalResponse(request: Request, rep: Representation): Response {
  if (ifNoneMatchHits(request.headers.get("if-none-match"), rep.etag)) {
    const { "content-type": _type, ...headers } = rep.headers;
    return new Response(null, { status: 304, headers });
  }
  return new Response(rep.body, { headers: rep.headers });
}
