import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { conditionalResponse, ifNoneMatchHits, representation, strongEtag } from "../../src/http/caching/conditional";
import { openTestApp, type TestApp } from "../support/app";

// Strong ETags over the exact bytes and 304 Not Modified (src/http/caching/conditional.ts), for the API documents,
// the docs pages and their embedded bundles.

let h: TestApp;
afterEach(() => h?.close());

describe("If-None-Match", () => {
  const tag = strongEtag("hello");
  test("the tag is the quoted base64url SHA-256 of the bytes", () => {
    expect(tag).toBe(`"${createHash("sha256").update("hello").digest("base64url")}"`);
    expect(strongEtag(new TextEncoder().encode("hello"))).toBe(tag);
  });
  test("matches the tag, a list holding it, a weakened copy of it and *; nothing else", () => {
    expect(ifNoneMatchHits(tag, tag)).toBe(true);
    expect(ifNoneMatchHits(`"other", ${tag}`, tag)).toBe(true);
    expect(ifNoneMatchHits(`W/${tag}`, tag)).toBe(true);
    expect(ifNoneMatchHits("*", tag)).toBe(true);
    expect(ifNoneMatchHits(`"other"`, tag)).toBe(false);
    expect(ifNoneMatchHits(tag.slice(1, -1), tag)).toBe(false); // unquoted is not an entity tag
    expect(ifNoneMatchHits("", tag)).toBe(false);
    expect(ifNoneMatchHits(null, tag)).toBe(false);
  });
  test("a 304 carries the validator and the caching headers and no body", async () => {
    const rep = representation("hello", "text/plain; charset=utf-8", "public, no-cache");
    const hit = conditionalResponse(new Request("http://x/", { headers: { "if-none-match": rep.etag } }), rep);
    expect(hit.status).toBe(304);
    expect(hit.headers.get("etag")).toBe(rep.etag);
    expect(hit.headers.get("cache-control")).toBe("public, no-cache");
    expect(await hit.text()).toBe("");
    const miss = conditionalResponse(new Request("http://x/"), rep);
    expect(miss.status).toBe(200);
    expect(await miss.text()).toBe("hello");
  });
});

describe("served documents", () => {
  const DOCUMENTS = [
    "/api/openapi.json",
    "/api/openapi.yaml",
    "/api/openapi-transparency.yaml",
    "/api/openapi/partners.json",
    "/api/openapi/operators.json",
    "/api/docs",
    "/api/docs/swagger",
    "/api/docs/assets/scalar-api-reference.js",
    "/api/docs/assets/swagger-ui.css",
  ];

  test("each has a strong ETag over its bytes and Cache-Control, and answers 304 to If-None-Match", async () => {
    h = await openTestApp();
    for (const path of DOCUMENTS) {
      const first = await h.request(path);
      expect(first.status, path).toBe(200);
      const etag = first.headers.get("etag")!;
      const bytes = new Uint8Array(await first.arrayBuffer());
      expect(etag, path).toBe(strongEtag(bytes));
      expect(first.headers.get("cache-control"), path).toMatch(/^public, /);
      const again = await h.request(path, { headers: { "if-none-match": etag } });
      expect(again.status, path).toBe(304);
      expect(again.headers.get("etag"), path).toBe(etag);
      expect((await again.arrayBuffer()).byteLength, path).toBe(0);
      const stale = await h.request(path, { headers: { "if-none-match": '"not-this-one"' } });
      expect(stale.status, path).toBe(200);
      expect(stale.headers.get("etag"), path).toBe(etag);
      await stale.arrayBuffer();
    }
  });

  test("the documents are built once per app: the same bytes and tag on every request", async () => {
    h = await openTestApp();
    const a = await h.request("/api/openapi.yaml");
    const b = await h.request("/api/openapi.yaml");
    expect(a.headers.get("etag")).toBe(b.headers.get("etag")!);
    expect(await a.text()).toBe(await b.text());
  });
});
