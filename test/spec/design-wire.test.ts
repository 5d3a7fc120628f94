// Design audit: wire conventions (docs/design.md §2) on routes of each audience.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const newUser = async (k: TestKey, ext: string) =>
  (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: ext, username: `u${ext}`, display_name: "U" } })).body.user.id as number;

describe("docs/design.md §2 request ids and the error body", () => {
  // "Failure: { success: false, error, message, request_id }"; "Every response carries X-Request-ID (the client's
  // value if it sent a sane one, else generated)"
  test("a sane client X-Request-ID is echoed on successes and on refusals of each stage; an insane one is replaced", async () => {
    h = await openTestApp({ env: { MAX_BODY_BYTES: "1024" } });
    const k = await createKey(h);
    const rid = "client-req-000123";
    const cases: Array<[string, RequestInit, number]> = [
      ["/api/public-stats", {}, 200],
      ["/nope", {}, 404],
      ["/api/public-stats", { method: "DELETE" }, 405],
      [
        "/api/canary/echo",
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "x".repeat(2000), request_id: "a" }) },
        413,
      ],
      [`/api/public-stats?x=${"a".repeat(9000)}`, {}, 414],
      ["/api/canary/echo", { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" }, 415],
      ["/api/canary/echo", { method: "POST", headers: { "content-type": "application/json" }, body: "{bad" }, 400],
      ["/api/partner/capabilities", {}, 401],
      ["/admin/jobs", {}, 403],
    ];
    for (const [path, init, status] of cases) {
      const headers = new Headers(init.headers);
      headers.set("x-request-id", rid);
      const r = await h.request(path, { ...init, headers });
      expect(`${path.slice(0, 40)} ${r.status}`).toBe(`${path.slice(0, 40)} ${status}`);
      expect(r.headers.get("x-request-id")).toBe(rid);
      const body = (await r.json()) as Record<string, unknown>;
      if (status >= 400) {
        expect(body).toMatchObject({ success: false, request_id: rid });
        expect(typeof body.error).toBe("string");
        expect(typeof body.message).toBe("string");
      }
    }
    const signed = await signedJson(h, k, "GET", "/api/partner/capabilities", { headers: { "X-Request-ID": rid } });
    expect(signed.headers.get("x-request-id")).toBe(rid);
    for (const bad of ["has space here", "x".repeat(129)]) {
      const r = await h.request("/api/public-stats", { headers: { "x-request-id": bad } });
      expect(r.headers.get("x-request-id")).not.toBe(bad);
      expect(r.headers.get("x-request-id")!.length).toBeGreaterThan(0);
    }
  });

  // "include_meta=1|true adds meta: { request_id, generated_at_utc }"
  test("include_meta=1 and include_meta=true add meta on a public, a partner and an operator route; 0 leaves it out", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const admin = await createAdminToken(h);
    for (const flag of ["1", "true"]) {
      const pub = await h.json(`/api/public/system-status/policy?include_meta=${flag}`);
      const part = await signedJson(h, k, "GET", `/api/partner/users?include_meta=${flag}`);
      const op = await h.json(`/admin/jobs?include_meta=${flag}`, { headers: { authorization: `Bearer ${admin}` } });
      for (const r of [pub, part, op]) {
        expect(r.body.meta.request_id).toBe(r.headers.get("x-request-id")!);
        expect(r.body.meta.generated_at_utc).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      }
    }
    expect((await h.json("/api/public/system-status/policy?include_meta=0")).body.meta).toBeUndefined();
  });
});

describe("docs/design.md §2 lists", () => {
  // "cursor (opaque, base64url, stable under inserts)"; "pagination {has_more, next_offset, next_cursor}"
  test("a users cursor is base64url and the next page neither repeats nor skips a row when rows are inserted between pages", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await newUser(k, `c${i}`));
      h.clock.advance(1000);
    }
    const p1 = (await signedJson(h, k, "GET", "/api/partner/users?limit=2")).body;
    expect(p1.pagination.has_more).toBe(true);
    expect(p1.pagination.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    await newUser(k, "clate1");
    await newUser(k, "clate2");
    const p2 = (await signedJson(h, k, "GET", `/api/partner/users?limit=2&cursor=${p1.pagination.next_cursor}`)).body;
    const p3 = (await signedJson(h, k, "GET", `/api/partner/users?limit=2&cursor=${p2.pagination.next_cursor}`)).body;
    const seen = [...p1.users, ...p2.users, ...p3.users].map((u: { id: number }) => u.id);
    expect(seen).toEqual([...ids].reverse());
    expect(p3.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
    expect(p2.query).toMatchObject({ limit: 2, cursor: p1.pagination.next_cursor });
  });

  // "limit (default 50, max 200, out of range → 400)"
  test("ledger and webhook-events: limit 201 and 0 are 400, the default echoed is 50, a forged cursor is 400", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "l1");
    for (const base of [`/api/salutes/ledger?user_id=${uid}&`, "/api/partner/webhook-events?"]) {
      expect((await signedJson(h, k, "GET", `${base}limit=201`)).status).toBe(400);
      expect((await signedJson(h, k, "GET", `${base}limit=0`)).status).toBe(400);
      const ok = await signedJson(h, k, "GET", base.slice(0, -1));
      expect(ok.status).toBe(200);
      expect(ok.body.query.limit).toBe(50);
      const forged = await signedJson(h, k, "GET", `${base}cursor=${Buffer.from("not a cursor").toString("base64url")}`);
      expect([forged.status, forged.body.error]).toEqual([400, "invalid_query"]);
    }
  });
});

describe("docs/design.md §2 conditional GET and the body guardrail", () => {
  // "Conditional GET where the spec names it: strong ETag over the body bytes, Last-Modified, 304 on match"
  test.each(["/admin/ops/preflight-guards/delta.summary.json", "/admin/ops/digest/resolved-verification.json"])(
    "%s: strong ETag, Last-Modified, Cache-Control, 304 on If-None-Match and If-Modified-Since, 200 on a stale tag",
    async (path) => {
      h = await openTestApp();
      const admin = await createAdminToken(h);
      const auth = { authorization: `Bearer ${admin}` };
      const first = await h.request(path, { headers: auth });
      expect(first.status).toBe(200);
      const etag = first.headers.get("etag")!;
      expect(etag).toMatch(/^"[^"]+"$/);
      const lm = first.headers.get("last-modified")!;
      expect(first.headers.get("cache-control")).toBeTruthy();
      expect(Number.isNaN(Date.parse(lm))).toBe(false);
      await first.text();
      const again = await h.request(path, { headers: { ...auth, "if-none-match": etag } });
      expect(again.status).toBe(304);
      expect(again.headers.get("etag")).toBe(etag);
      expect(await again.text()).toBe("");
      expect((await h.request(path, { headers: { ...auth, "if-modified-since": lm } })).status).toBe(304);
      // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
      expect((await h.request(path, { headers: { ...auth, "if-none-match": '"stale"', "if-modified-since": lm } })).status).toBe(200);
    },
  );

  // "Body guardrail: MAX_BODY_BYTES (default 1 MiB) → 413 payload_too_large"
  test("the default guardrail: a body of 1 MiB + 1 byte is 413 payload_too_large", async () => {
    h = await openTestApp();
    const body = JSON.stringify({ message: "x", request_id: "a", pad: "y".repeat(1024 * 1024) });
    const r = await h.json("/api/canary/echo", { method: "POST", headers: { "content-type": "application/json" }, body });
    expect([r.status, r.body.error]).toEqual([413, "payload_too_large"]);
  });
});

describe("docs/design.md §2 rate limits: defaults per group", () => {
  // "RATE_LIMIT_PUBLIC_API_PER_MIN=90 per IP …, RATE_LIMIT_WEBHOOK_PER_MIN=120 per key for /api/partner/webhooks* and
  // /webhook-events*, PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE=30 per sandbox key, … RATE_LIMIT_PARTNER_PER_MIN … default
  // 6000 per key"; "headers X-RateLimit-Limit/Remaining/Reset on every limited response"
  test("X-RateLimit-Limit is 90 public, 120 on webhook routes, 6000 on other live routes, 30 for a sandbox key", async () => {
    h = await openTestApp();
    const live = await createKey(h);
    const sandbox = await createKey(h, { mode: "sandbox" });
    const limitOf = (r: { headers: Headers }) => [
      r.headers.get("x-ratelimit-limit"),
      r.headers.get("x-ratelimit-remaining") !== null,
      r.headers.get("x-ratelimit-reset") !== null,
    ];
    expect(limitOf(await h.json("/api/public-stats"))).toEqual(["90", true, true]);
    expect(limitOf(await h.json("/transparency/audit-anomalies/glossary.json"))).toEqual(["90", true, true]);
    expect(limitOf(await signedJson(h, live, "GET", "/api/partner/webhooks"))).toEqual(["120", true, true]);
    expect(limitOf(await signedJson(h, live, "GET", "/api/partner/webhook-events"))).toEqual(["120", true, true]);
    expect(limitOf(await signedJson(h, live, "GET", "/api/partner/users"))).toEqual(["6000", true, true]);
    expect(limitOf(await signedJson(h, sandbox, "GET", "/api/partner/sandbox/users"))).toEqual(["30", true, true]);
    expect(limitOf(await signedJson(h, sandbox, "GET", "/api/partner/capabilities"))).toEqual(["30", true, true]);
  });
});
