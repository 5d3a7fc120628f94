// Docs audit: the rules of docs/http-conventions.md (bodies, queries, request target, caching, security headers,
// compression) against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedInit } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const echo = (body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
  h.json("/api/canary/echo", { method: "POST", headers, body });

describe("docs/http-conventions.md — request bodies", () => {
  // docs/http-conventions.md:13-30 — media type, JSON strictness, nesting, keys, duplicates, NUL
  test("body rules", async () => {
    h = await openTestApp();
    const ok = '{"message":"hi","request_id":"r1"}';
    expect((await echo(ok)).status).toBe(200);
    expect((await echo(ok, { "content-type": "application/vnd.herald+json" })).status).toBe(200);
    expect((await echo(ok, { "content-type": "application/json; charset=utf-8" })).status).toBe(200);
    for (const ct of ["text/plain", "application/json; charset=latin1", ""]) {
      const r = await h.json("/api/canary/echo", { method: "POST", headers: ct ? { "content-type": ct } : {}, body: ok });
      expect([ct, r.status, r.body.error]).toEqual([ct, 415, "unsupported_media_type"]);
    }
    const cases: [string, string][] = [
      ["trailing comma", '{"message":"hi","request_id":"r1",}'],
      ["comment", '{"message":"hi" /* x */,"request_id":"r1"}'],
      ["NaN", '{"message":NaN,"request_id":"r1"}'],
      ["duplicate", '{"message":"a","message":"b","request_id":"r1"}'],
      ["__proto__", '{"message":"a","request_id":"r1","__proto__":{}}'],
      ["33 levels", `{"message":"a","request_id":"r1","x":${"[".repeat(32)}${"]".repeat(32)}}`],
      ["array", "[]"],
      ["null", "null"],
      ["unknown field", '{"message":"a","request_id":"r1","x":1}'],
      ["number as text", '{"message":1,"request_id":"r1"}'],
      ["NUL", '{"message":"a\\u0000b","request_id":"r1"}'],
      ["missing", "{}"],
    ];
    for (const [name, body] of cases) {
      const r = await echo(body);
      expect([name, r.status, r.body.error]).toEqual([name, 400, "invalid_payload"]);
      expect(r.headers.get("x-request-id")).toBe(r.body.request_id);
    }
    const many = `{"message":"a","request_id":"r1","x":[${Array.from({ length: 10001 }, () => "0").join(",")}]}`;
    const m = await echo(many);
    expect([m.status, m.body.error]).toEqual([400, "invalid_payload"]);
    expect(m.body.message).toContain("10000");
    const deep = await echo(`{"message":"a","request_id":"r1","x":${"[".repeat(40)}${"]".repeat(40)}}`);
    expect(deep.body.message).toContain("32 levels");
    const dup = await echo('{"message":"a","message":"b","request_id":"r1"}');
    expect(dup.body.message).toContain('the key "message" appears twice in one object');
    const missing = await echo("{}");
    expect(missing.body.message).toContain("message is required");
  });

  // docs/http-conventions.md:23 — a route without a request body takes none; an empty body or {} is accepted
  test("a route without a body refuses one", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const ok = await h.json("/admin/jobs/request-log-prune/run", { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: "{}" });
    expect(ok.status).toBe(200);
    const bad = await h.json("/admin/jobs/request-log-prune/run", jsonInit("POST", { x: 1 }, auth));
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_payload"]);
    expect(bad.body.details).toEqual([{ field: "body", problem: "must be empty" }]);
  });

  // docs/http-conventions.md:14 — MAX_BODY_BYTES (default 1 MiB) → 413 payload_too_large
  test("413 over 1 MiB", async () => {
    h = await openTestApp();
    const big = `{"message":"${"x".repeat(1024 * 1024)}","request_id":"r"}`;
    const r = await echo(big);
    expect([r.status, r.body.error]).toEqual([413, "payload_too_large"]);
  });
});

describe("docs/http-conventions.md — query and path parameters, request target", () => {
  // docs/http-conventions.md:67-110
  test("integers, repeats, flags, unknown parameters, 414", async () => {
    h = await openTestApp();
    const P = "/api/public/system-status/uptime";
    expect((await h.json(`${P}?hours=007`)).body.selected_hours).toBe(7);
    for (const v of ["0x10", "0b11", "1e1", "%2B10", "%2010", "10.0", "1.5", "Infinity", "NaN", "-1", ""]) {
      const r = await h.json(`${P}?hours=${v}`);
      expect([v, r.status, r.body.error]).toEqual([v, 400, "invalid_query"]);
    }
    const r = await h.json(`${P}?hours=1.5`);
    expect(r.body.details).toEqual([{ field: "query.hours", problem: 'must be an integer from 1 to 2160; got "1.5"' }]);
    const rep = await h.json(`${P}?hours=2&hours=3`);
    expect([rep.status, rep.body.error]).toEqual([400, "invalid_query"]);
    expect(rep.body.message).toContain("query.hours is given more than once; give it once");
    const unk = await h.json(`${P}?nope=1`);
    expect([unk.status, unk.body.error]).toEqual([400, "invalid_query"]);
    expect((await h.request("/healthz?lb=1")).status).toBe(200);
    const bare = await h.json(`${P}?include_meta`);
    expect(bare.body.meta.request_id).toBe(bare.headers.get("x-request-id"));
    expect((await h.json(`${P}?include_meta=0`)).body.meta).toBeUndefined();
    expect((await h.json(`${P}?include_meta=yes`)).body.meta).toBeUndefined();
    const csv = await h.request("/api/public/holder-cache-freshness.csv?include_meta=1");
    expect(csv.status).toBe(200);
    const long = await h.json(`${P}?x=${"a".repeat(8200)}`);
    expect([long.status, long.body.error]).toEqual([414, "uri_too_long"]);
    const edge = `${P}?hours=1&pad=`;
    const at8192 = await h.request(edge + "a".repeat(8192 - edge.length));
    expect(at8192.status).toBe(400);
    const enumBad = await h.json("/api/salutes/ledger?user_id=1&order=up", signedInit(h, await createKey(h), "GET", "/api/salutes/ledger?user_id=1&order=up"));
    expect(enumBad.body.message).toContain("must be one of: asc, desc");
  });
});

describe("docs/http-conventions.md — answers", () => {
  // docs/http-conventions.md:196-212 — operator answers: Cache-Control private, no-store; with validators private, no-cache
  test("Cache-Control of operator answers, refusals included", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    for (const [p, hd] of [
      ["/admin/jobs", auth],
      ["/admin/jobs", {}],
      ["/admin/ops/readiness/403-noise/export.csv", auth],
      ["/admin/ops/readiness/403-noise/export.json?days=10", auth],
      ["/metrics", auth],
      ["/api/messenger/admin/missions", auth],
    ] as const) {
      const r = await h.request(p, { headers: hd });
      expect([p, r.headers.get("cache-control")]).toEqual([p, "private, no-store"]);
    }
    const v = await h.request("/admin/ops/preflight-guards/delta.summary.json", { headers: auth });
    expect(v.headers.get("cache-control")).toBe("private, no-cache");
  });

  // docs/http-conventions.md:216-235 — nosniff on every answer; page headers; no HSTS outside production
  test("security headers", async () => {
    h = await openTestApp();
    for (const p of ["/api/public-stats", "/status", "/status/badge/overall.svg", "/status/feed.rss", "/nope", "/api/openapi.yaml"]) {
      const r = await h.request(p);
      expect([p, r.headers.get("x-content-type-options")]).toEqual([p, "nosniff"]);
      expect([p, r.headers.get("strict-transport-security")]).toEqual([p, null]);
    }
    const s = await h.request("/status");
    expect(s.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(s.headers.get("x-frame-options")).toBe("DENY");
    expect(s.headers.get("referrer-policy")).toBe("same-origin");
  });

  // docs/http-conventions.md:290-300 — compression over 1 KiB: br preferred, gzip else, weak ETag, Vary; signed partner JSON never
  test("compression", async () => {
    h = await openTestApp();
    const br = await h.request("/api/openapi.json", { headers: { "accept-encoding": "gzip, br" } });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("vary")?.toLowerCase()).toContain("accept-encoding");
    expect(br.headers.get("etag")?.startsWith('W/"')).toBe(true);
    const etag = br.headers.get("etag")!;
    const nm = await h.request("/api/openapi.json", { headers: { "accept-encoding": "gzip, br", "if-none-match": etag } });
    expect(nm.status).toBe(304);
    const gz = await h.request("/api/openapi.json", { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    JSON.parse(gunzipSync(new Uint8Array(await gz.arrayBuffer())).toString());
    const q0 = await h.request("/api/openapi.json", { headers: { "accept-encoding": "br;q=0, gzip" } });
    expect(q0.headers.get("content-encoding")).toBe("gzip");
    const id = await h.request("/api/openapi.json", { headers: { "accept-encoding": "identity" } });
    expect(id.headers.get("content-encoding")).toBeNull();
    const small = await h.request("/healthz", { headers: { "accept-encoding": "gzip, br" } });
    expect(small.headers.get("content-encoding")).toBeNull();
    const k = await createKey(h);
    for (let i = 0; i < 30; i++)
      await h.request(
        "/api/partner/users",
        signedInit(h, k, "POST", "/api/partner/users", { body: { external_id: `e${i}`, username: `user${i}`, display_name: "x".repeat(60) } }),
      );
    const init = signedInit(h, k, "GET", "/api/partner/users?limit=200");
    const pl = await h.request("/api/partner/users?limit=200", {
      ...init,
      headers: { ...(init.headers as Record<string, string>), "accept-encoding": "gzip, br" },
    });
    expect(pl.status).toBe(200);
    expect(Number(pl.headers.get("content-length") ?? (await pl.clone().arrayBuffer()).byteLength)).toBeGreaterThan(1024);
    expect(pl.headers.get("content-encoding")).toBeNull();
  });

  // docs/http-conventions.md:318-335 — rate limit headers; Retry-After equals the reset moment on a 429
  test("rate limit headers", async () => {
    h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "2" } });
    const a = await h.request("/api/public-stats");
    expect([a.headers.get("x-ratelimit-limit"), a.headers.get("x-ratelimit-remaining")]).toEqual(["2", "1"]);
    await h.request("/api/public-stats");
    const c = await h.json("/api/public-stats");
    expect([c.status, c.body.error]).toEqual([429, "rate_limited"]);
    const reset = Number(c.headers.get("x-ratelimit-reset"));
    const now = Math.floor(h.clock.now().getTime() / 1000);
    expect(Number(c.headers.get("retry-after"))).toBe(reset - now);
    expect(reset - now).toBeGreaterThan(0);
    expect(reset - now).toBeLessThanOrEqual(61);
  });
});
