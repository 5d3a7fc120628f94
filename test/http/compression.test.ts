import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { brotliDecompressSync } from "node:zlib";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedInit } from "../support/partner";
import {
  ASYNC_COMPRESS_BYTES,
  CompressedCache,
  compressBytes,
  compressBytesOffLoop,
  compressedAnswer,
  MIN_COMPRESS_BYTES,
  preferredEncoding,
} from "../../src/http/compression";
import { compressesAnswers } from "../../src/http/core";

let h: TestApp;
beforeAll(async () => {
  h = await openTestApp();
});
afterAll(() => h.close());

const get = (path: string, acceptEncoding?: string) => h.request(path, { headers: acceptEncoding ? { "accept-encoding": acceptEncoding } : {} });

const decode = async (res: Response) => {
  const bytes = new Uint8Array(await res.arrayBuffer());
  const enc = res.headers.get("content-encoding");
  return new TextDecoder().decode(enc === "gzip" ? Bun.gunzipSync(bytes) : enc === "br" ? brotliDecompressSync(bytes) : bytes);
};

describe("response compression", () => {
  test("a JSON answer over 1 KB is gzip- or br-compressed when accepted, and decodes to the same document", async () => {
    const plain = await get("/api/partner/errors.json");
    const text = await plain.text();
    expect(text.length).toBeGreaterThan(MIN_COMPRESS_BYTES);
    expect(plain.headers.get("content-encoding")).toBeNull();
    for (const [accept, expected] of [
      ["gzip", "gzip"],
      ["gzip, deflate, br", "br"],
      ["br;q=0, gzip", "gzip"],
      ["*", "br"],
    ] as const) {
      const res = await get("/api/partner/errors.json", accept);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding")).toBe(expected);
      expect(res.headers.get("vary")).toContain("Accept-Encoding");
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(JSON.parse(await decode(res))).toEqual(JSON.parse(text));
    }
  });

  test("a body of 64 KiB or more is compressed off the event loop; a smaller one at once; both decode to the document", async () => {
    const plain = await (await get("/api/partner/errors.json")).text();
    expect(plain.length).toBeGreaterThan(ASYNC_COMPRESS_BYTES); // the HTTP test above went the thread pool's way
    const value = { items: Array.from({ length: 4_000 }, (_, i) => ({ id: i, note: `entry ${i} of the list`, at: new Date(i * 1000).toISOString() })) };
    expect(JSON.stringify(value).length).toBeGreaterThan(ASYNC_COMPRESS_BYTES);
    const small = { items: value.items.slice(0, 100) };
    expect(JSON.stringify(small).length).toBeLessThan(ASYNC_COMPRESS_BYTES);
    for (const encoding of ["gzip", "br"] as const) {
      const large = compressedAnswer(value, encoding, 201, new CompressedCache());
      expect(large).toBeInstanceOf(Promise);
      const res = await large!;
      expect([res.status, res.headers.get("content-encoding")]).toEqual([201, encoding]);
      expect(JSON.parse(await decode(res))).toEqual(value);
      const now = compressedAnswer(small, encoding, 200, new CompressedCache());
      expect(now).toBeInstanceOf(Response);
      expect(JSON.parse(await decode(now as Response))).toEqual(small);
    }
  });

  test("while a large body is compressed, the server's event loop runs: a timer set after it fires first", async () => {
    // ~7 MB of CSV: tens of milliseconds of compression either way (105 ms brotli, 59 ms gzip for 8 MB, measured).
    const bytes = new TextEncoder().encode(
      Array.from({ length: 160_000 }, (_, i) => `${i},row ${(i * 7919) % 100_003},2026-11-27T10:00:00.000Z,GET`).join("\n"),
    );
    for (const encoding of ["gzip", "br"] as const) {
      const order: string[] = [];
      const compressing = compressBytesOffLoop(bytes, encoding).then((out) => {
        order.push("compressed");
        return out;
      });
      const timer = Bun.sleep(0).then(() => order.push("timer"));
      const [out] = await Promise.all([compressing, timer]);
      expect({ encoding, order }).toEqual({ encoding, order: ["timer", "compressed"] });
      const back = encoding === "gzip" ? Bun.gunzipSync(out as Uint8Array<ArrayBuffer>) : brotliDecompressSync(out);
      expect(Buffer.from(back).equals(Buffer.from(bytes))).toBe(true);
    }
    // The same settings as on the event loop: the same bytes for brotli.
    const some = bytes.subarray(0, 200_000);
    expect(Buffer.from(await compressBytesOffLoop(some, "br")).equals(Buffer.from(compressBytes(some, "br")))).toBe(true);
  });

  test("requests arriving together for a document not yet cached share one compression", async () => {
    const cache = new CompressedCache();
    let built = 0;
    const bytes = () => {
      built++;
      return new TextEncoder().encode("x".repeat(ASYNC_COMPRESS_BYTES * 2));
    };
    const [a, b] = await Promise.all([cache.get('"e1"', "gzip", bytes), cache.get('"e1"', "gzip", bytes)]);
    expect(a).toBe(b);
    expect(built).toBe(1);
  });

  test("small answers, refused encodings and clients that do not ask are sent as they are", async () => {
    const small = await get("/healthz", "gzip, br");
    expect(small.headers.get("content-encoding")).toBeNull();
    expect(((await small.json()) as { success: boolean }).success).toBe(true);
    const refused = await get("/api/partner/errors.json", "gzip;q=0, br;q=0, identity");
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(preferredEncoding("deflate")).toBeNull();
  });

  test("YAML and HTML documents are compressed too; an ETag becomes weak when the bytes are encoded", async () => {
    // The status page shows the request log's latency figures: unlogged here, so the two renders compared are the
    // same page (the first request would otherwise be counted in the second).
    h.ctx.requestLog.record = () => {};
    for (const path of ["/api/openapi.yaml", "/status"]) {
      const plain = await get(path);
      const body = await plain.text();
      const res = await get(path, "gzip");
      expect(res.headers.get("content-encoding")).toBe("gzip");
      expect(await decode(res)).toBe(body);
      const etag = plain.headers.get("etag");
      if (etag) expect(res.headers.get("etag")).toBe(etag.startsWith("W/") ? etag : `W/${etag}`);
    }
  });

  test("answers that are not compressed keep their headers and body (an image, a small CSV)", async () => {
    const svg = await get("/api/docs", "gzip"); // HTML over 1 KB: compressed
    expect(svg.headers.get("content-type")).toContain("text/html");
    const badge = await get("/status/badge/overall.svg", "gzip");
    expect(badge.headers.get("content-type")).toContain("svg");
    expect((await badge.text()).length).toBeGreaterThan(0);
  });

  test("signed partner JSON answers are sent as they are, even when large", async () => {
    const key = await createKey(h);
    const signed = await h.request(
      "/api/partner/capabilities",
      signedInit(h, key, "GET", "/api/partner/capabilities", { headers: { "accept-encoding": "gzip" } }),
    );
    expect(signed.status).toBe(200);
    expect(signed.headers.get("content-encoding")).toBeNull();
    expect((await signed.text()).length).toBeGreaterThan(MIN_COMPRESS_BYTES); // large enough to be compressed elsewhere
  });

  test("the hook is off the signed partner routes and the health probes, and on every other route", () => {
    const history = h.app.router.history as unknown as Parameters<typeof compressesAnswers>[0][];
    const carrying = (path: string, method = "GET") =>
      compressesAnswers(history.find((r) => r.path === path && (r as unknown as { method: string }).method === method)!);
    for (const path of ["/api/salutes/credit", "/api/partner/sandbox/salutes/credit"]) expect(carrying(path, "POST")).toBe(false);
    for (const path of ["/api/partner/capabilities", "/api/salutes/balance", "/healthz", "/readyz"]) expect(carrying(path)).toBe(false);
    for (const path of ["/api/partner/errors.json", "/api/openapi.json", "/status", "/metrics", "/api/public/system-status/trend"])
      expect(carrying(path)).toBe(true);
    const signed = history.filter((r) => !compressesAnswers(r)).length;
    expect(signed).toBeGreaterThan(50); // every signed route (55 today) and the two probes
    expect(history.length - signed).toBeGreaterThan(100);
  });

  test("error envelopes keep their status and stay JSON", async () => {
    const res = await get(`/api/partner/users?limit=0`, "gzip");
    expect(res.status).toBe(401);
    expect(((await res.json()) as { success: boolean }).success).toBe(false);
  });
});
