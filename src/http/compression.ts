import { promisify } from "node:util";
import { brotliCompress, brotliCompressSync, gzip, constants as zlib } from "node:zlib";

/**
 * Response compression (br preferred, then gzip) of text bodies over MIN_COMPRESS_BYTES. A compressed answer's strong
 * ETag becomes weak, as the bytes on the wire differ; If-None-Match compares weakly (RFC 9110 §13.1.2). Bodies with
 * an ETag (the big unchanging documents) are compressed once into a per-process cache; brotli runs at quality 5, as
 * 11 costs tens of ms per 100 KB. From ASYNC_COMPRESS_BYTES the work goes to the thread pool: an 8 MB CSV took 105 ms
 * (brotli) on the event loop, with nothing else answered meanwhile; below it, less than the hop to a thread.
 */
export const MIN_COMPRESS_BYTES = 1024;
export const ASYNC_COMPRESS_BYTES = 64 * 1024;

const COMPRESSIBLE =
  /^(application\/(json|[a-z.+-]*\+json|yaml|x-yaml|javascript|xml|rss\+xml|atom\+xml|feed\+json)|text\/(csv|html|plain|yaml|javascript|css|xml|markdown))\b/i;

export type Encoding = "br" | "gzip";

/** The best encoding the client accepts, or null. */
export function preferredEncoding(acceptEncoding: string | null): Encoding | null {
  if (!acceptEncoding) return null;
  let br = false;
  let gzip = false;
  let star = false;
  for (const part of acceptEncoding.toLowerCase().split(",")) {
    const [token, ...params] = part.trim().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const allowed = !q || Number(q.slice(2)) > 0;
    if (token === "br") br = allowed;
    else if (token === "gzip" || token === "x-gzip") gzip = allowed;
    else if (token === "*") star = allowed;
  }
  if (br || (star && !acceptEncoding.includes("br"))) return "br";
  if (gzip || star) return "gzip";
  return null;
}

const brotliParams = (size: number) => ({ params: { [zlib.BROTLI_PARAM_QUALITY]: 5, [zlib.BROTLI_PARAM_SIZE_HINT]: size } });
const brotliOffLoop = promisify(brotliCompress);
const gzipOffLoop = promisify(gzip);

/** The body compressed on the event loop: for bodies under ASYNC_COMPRESS_BYTES. */
export function compressBytes(bytes: Uint8Array, encoding: Encoding): Uint8Array {
  if (encoding === "gzip") return Bun.gzipSync(bytes as Uint8Array<ArrayBuffer>, { level: 6 });
  return brotliCompressSync(bytes, brotliParams(bytes.byteLength));
}

/** The body compressed on the thread pool, with the same settings (the same bytes as compressBytes). */
export async function compressBytesOffLoop(bytes: Uint8Array, encoding: Encoding): Promise<Uint8Array> {
  const out = encoding === "gzip" ? await gzipOffLoop(bytes, { level: 6 }) : await brotliOffLoop(bytes, brotliParams(bytes.byteLength));
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** Either, by size: a large body never holds the event loop. */
export function compressEither(bytes: Uint8Array, encoding: Encoding): Uint8Array | Promise<Uint8Array> {
  return bytes.byteLength < ASYNC_COMPRESS_BYTES ? compressBytes(bytes, encoding) : compressBytesOffLoop(bytes, encoding);
}

/**
 * Compressed bodies of ETag-bearing responses, bounded: the documents are few, so the bound is never the limit. An
 * entry is the compression under way, so requests arriving together for a document not yet cached share one.
 */
export class CompressedCache {
  private entries = new Map<string, Promise<Uint8Array>>();
  constructor(private readonly maxEntries = 64) {}

  get(etag: string, encoding: Encoding, bytes: () => Uint8Array): Promise<Uint8Array> {
    const key = `${encoding} ${etag}`;
    let hit = this.entries.get(key);
    if (!hit) {
      hit = Promise.resolve(compressEither(bytes(), encoding));
      // A failed compression is not kept: the next request tries again.
      hit.catch(() => this.entries.get(key) === hit && this.entries.delete(key));
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, hit);
    }
    return hit;
  }
}

const encoder = new TextEncoder();

/**
 * The compressed form of a handler's answer. `value` is what the handler returned: a plain object (serialised here
 * exactly as Elysia would) or a Response. Undefined: send it as it is. The decision is made synchronously, and a
 * Promise is returned only when it always resolves to a Response: Elysia 1.4.30 sends an empty body without headers
 * when a mapResponse Promise resolves to undefined (test/http/compression.test.ts holds this).
 */
export function compressedAnswer(
  value: unknown,
  acceptEncoding: string | null,
  status: number,
  cache: CompressedCache,
): Response | Promise<Response> | undefined {
  const encoding = preferredEncoding(acceptEncoding);
  if (!encoding || status === 204 || status === 304) return undefined;
  if (value instanceof Response) {
    const type = value.headers.get("content-type") ?? "";
    if (!value.body || value.headers.has("content-encoding") || !COMPRESSIBLE.test(type)) return undefined;
    const declared = value.headers.get("content-length");
    if (declared !== null && Number(declared) < MIN_COMPRESS_BYTES) return undefined;
    // Scripts and stylesheets are the docs UI's assets: compressed only when an ETag lets the cache keep them.
    if (/javascript|css/.test(type) && !value.headers.has("etag")) return undefined;
    return compressResponse(value, encoding, cache);
  }
  if (value === null || typeof value !== "object" || value instanceof Uint8Array || value instanceof Blob) return undefined;
  // Serialised to learn its size; a small answer goes back to Elysia, which serialises it again. Measured in the
  // server (bench/README.md "compression"): building the Response here and letting Elysia merge its headers
  // into it cost ~18 µs of CPU per request, a second JSON.stringify of a small object well under 1 µs.
  const text = JSON.stringify(value);
  if (text.length < MIN_COMPRESS_BYTES) return undefined;
  const headers = { "content-type": "application/json;charset=utf-8", vary: "Accept-Encoding", "content-encoding": encoding };
  const body = compressEither(encoder.encode(text), encoding);
  return body instanceof Promise ? body.then((b) => new Response(b, { status, headers })) : new Response(body, { status, headers });
}

async function compressResponse(value: Response, encoding: Encoding, cache: CompressedCache): Promise<Response> {
  const bytes = new Uint8Array(await value.arrayBuffer());
  const headers = new Headers(value.headers);
  headers.append("vary", "Accept-Encoding");
  if (bytes.byteLength < MIN_COMPRESS_BYTES) return new Response(bytes, { status: value.status, headers });
  const etag = headers.get("etag");
  const body = etag ? await cache.get(etag, encoding, () => bytes) : await compressEither(bytes, encoding);
  if (etag && !etag.startsWith("W/")) headers.set("etag", `W/${etag}`);
  headers.set("content-encoding", encoding);
  headers.delete("content-length");
  return new Response(body, { status: value.status, headers });
}
