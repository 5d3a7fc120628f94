import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";

/** The numeric-parameter rule of src/http/params.ts, on the cases an outside fuzzer found (the document-wide check is test/fuzz/openapi-coverage.test.ts). */
let h: TestApp;
let key: TestKey;
beforeAll(async () => {
  h = await openTestApp();
  key = await createKey(h);
});
afterAll(() => h.close());

describe("numeric parameters", () => {
  test("the issue's cases: out-of-range, non-finite and fractional values are 400 invalid_query naming the parameter and range", async () => {
    const cases: Array<[string, string, string]> = [
      ["/api/partner/webhooks/dlq?hours=", "query.hours", "an integer from 1 to 2160"],
      ["/api/partner/analytics/usage?hours=", "query.hours", "an integer from 1 to 720"],
    ];
    for (const [base, field, range] of cases) {
      for (const v of ["1e308", "Infinity", "1.5", "99999999999999999999999", "-1", "0", "NaN", "0x10x"]) {
        const r = await signedJson(h, key, "GET", base + encodeURIComponent(v));
        expect(r.status).toBe(400);
        expect(r.body.error).toBe("invalid_query");
        expect(r.body.details).toEqual([{ field, problem: `must be ${range}; got ${JSON.stringify(v)}` }]);
        expect(r.body.message).toContain(field);
      }
    }
    for (const [path, field] of [
      ["/api/public/audio-share-links/stats?code=abc&hours=1e308", "query.hours"],
      ["/s/audio/abcdef/qr.png?size=1e308", "query.size"],
      ["/api/public/audio-share-links?track_url=https%3A%2F%2Fexample.com%2Ft%2F1&use_short=1&expires_in=2592001", "query.expires_in"],
      ["/api/public/audio-share-links?track_url=https%3A%2F%2Fexample.com%2Ft%2F1&use_short=1&expires_in=59", "query.expires_in"],
      ["/api/public/audio-share-links?track_url=https%3A%2F%2Fexample.com%2Ft%2F1&use_short=1&expires_in=-3", "query.expires_in"],
      ["/api/public/system-status/uptime?hours=1.5", "query.hours"],
    ]) {
      const r = await h.json(path!);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ success: false, error: "invalid_query", details: [{ field }] });
      expect(r.headers.get("x-request-id")).toBeTruthy();
    }
  });

  test("an integer is written in decimal digits: hex, binary, exponents, signs, spaces and fractions are refused, not converted", async () => {
    for (const v of ["0x10", "0X10", "0b11", "0o7", "1e1", "1E1", "+10", " 10", "10 ", "10.0", "1_000", "١٠", "10abc"]) {
      const r = await signedJson(h, key, "GET", `/api/partner/users?limit=${encodeURIComponent(v)}`);
      expect({ v, status: r.status, error: r.body.error }).toEqual({ v, status: 400, error: "invalid_query" });
      expect(r.body.details).toEqual([{ field: "query.limit", problem: `must be an integer from 1 to 200; got ${JSON.stringify(v)}` }]);
    }
    for (const v of ["0x1", "1e0", "+1", "1.0"]) {
      const r = await signedJson(h, key, "POST", `/api/partner/webhooks/${encodeURIComponent(v)}/recover`);
      expect({ v, status: r.status, field: r.body.details?.[0]?.field }).toEqual({ v, status: 400, field: "path.webhook_id" });
    }
    // Public routes, and an unsigned caller, get the same refusal.
    const r = await h.json("/api/public/system-status/incidents?hours=0x18");
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([{ field: "query.hours", problem: 'must be an integer from 1 to 2160; got "0x18"' }]);
    // Plain digits (a leading zero included) and a minus where the range allows one still read as numbers.
    const ok = await signedJson(h, key, "GET", "/api/partner/users?limit=007&offset=0");
    expect(ok.status).toBe(200);
    expect(ok.body.query).toMatchObject({ limit: 7, offset: 0 });
  });

  test("a path id that is not an integer in range is 400 naming the path parameter", async () => {
    for (const v of ["abc", "0", "1.5", "1e400"]) {
      const r = await signedJson(h, key, "POST", `/api/partner/webhooks/${v}/recover`);
      expect(r.status).toBe(400);
      expect(r.body.details[0].field).toBe("path.webhook_id");
    }
  });

  test("handlers see numbers: a window is never inverted and echoes are typed", async () => {
    const usage = await signedJson(h, key, "GET", "/api/partner/analytics/usage?hours=3");
    expect(usage.status).toBe(200);
    expect(usage.body.window.hours).toBe(3);
    expect(Date.parse(usage.body.window.start_utc)).toBeLessThan(Date.parse(usage.body.window.end_utc));
    const dlq = await signedJson(h, key, "GET", "/api/partner/webhooks/dlq?hours=2160");
    expect(dlq.body.window_hours).toBe(2160);
    const users = await signedJson(h, key, "GET", "/api/partner/users?limit=5&offset=0");
    expect(users.body.query).toMatchObject({ limit: 5, offset: 0 });
  });

  test("expires_in is seconds added to now: 60 expires a minute from now, never in another century", async () => {
    const r = await h.json("/api/public/audio-share-links?track_url=%2Ftracks%2F1&use_short=1&expires_in=60");
    expect(r.status).toBe(200);
    const text = JSON.stringify(r.body);
    const expiries = [...text.matchAll(/"expires_at(?:_utc)?":"([^"]+)"/g)].map((m) => Date.parse(m[1]!));
    expect(expiries.length).toBeGreaterThan(0);
    for (const at of expiries) expect(at - h.clock.now().getTime()).toBe(60_000);
  });
});

describe("a query parameter is given once", () => {
  test("a scalar parameter given twice is 400 invalid_query naming it, whichever of its values is valid", async () => {
    for (const q of ["limit=2&limit=3", "limit=5&limit=abc", "limit=abc&limit=5", "limit=5&limit=99999", "lim%69t=2&limit=3", "limit=2&offset=0&limit=2"]) {
      const r = await h.json(`/api/public/system-status/trend?${q}`);
      expect({ q, status: r.status, error: r.body.error }).toEqual({ q, status: 400, error: "invalid_query" });
      expect(r.body.details).toEqual([{ field: "query.limit", problem: "is given more than once; give it once" }]);
      expect(r.body.message).toBe("Invalid request parameters: query.limit is given more than once; give it once");
    }
    // Signed: the signature is judged first (an unsigned request is 401 whatever its query), then the repetition.
    const signed = await signedJson(h, key, "GET", "/api/partner/users?limit=5&limit=6");
    expect(signed.status).toBe(400);
    expect(signed.body.details).toEqual([{ field: "query.limit", problem: "is given more than once; give it once" }]);
    expect((await h.json("/api/partner/users?limit=5&limit=6")).status).toBe(401);
    // Different parameters, an empty pair, or one parameter: as before.
    for (const q of ["limit=2&include_meta=1", "limit=2&&include_meta=1", "limit=2"])
      expect((await h.json(`/api/public/system-status/trend?${q}`)).status).toBe(200);
  });

  test("a route's own query checks name the parameter as the schema's checks do (query.<name>)", async () => {
    const forged = await signedJson(h, key, "GET", "/api/partner/users?cursor=not-a-cursor");
    expect(forged.status).toBe(400);
    expect(forged.body.details).toEqual([
      { field: "query.cursor", problem: "is not a cursor this service issued; use pagination.next_cursor from a previous page" },
    ]);
    expect(forged.body.message).toBe(`Invalid request parameters: query.cursor ${forged.body.details[0].problem}`);
    // Well-formed but never issued: a negative id (ids start at 1), a fraction.
    for (const position of [-5, 1.5]) {
      const cursor = Buffer.from(JSON.stringify({ a: position })).toString("base64url");
      const r = await signedJson(h, key, "GET", `/api/partner/users?cursor=${cursor}`);
      expect([position, r.status, r.body.details?.[0]?.field]).toEqual([position, 400, "query.cursor"]);
    }
    const flag = await h.json("/api/public/system-status/uptime?exclude_maintenance=maybe");
    expect(flag.status).toBe(400);
    expect(flag.body.details).toEqual([{ field: "query.exclude_maintenance", problem: "must be one of: 1, true, 0, false" }]);
  });

  test("a parameter with no name (`?=5`) is named as such, not as query.?", async () => {
    for (const q of ["=5", "="]) {
      const r = await h.json(`/api/public/system-status/trend?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.details).toEqual([{ field: "query", problem: 'has a parameter with no name (nothing before its "=")' }]);
    }
    const unknown = await h.json("/api/public/system-status/trend?x=1");
    expect(unknown.body.details).toEqual([{ field: "query.x", problem: "is not a known field" }]);
  });

  test("signed routes declare no list query parameter (the partner guard lets none repeat)", async () => {
    const doc = (await h.json("/api/openapi.json")).body as {
      paths: Record<
        string,
        Record<string, { security?: Array<Record<string, unknown>>; parameters?: Array<{ in: string; name: string; schema?: { type?: string } }> }>
      >;
    };
    const lists: string[] = [];
    let signed = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!(op.security ?? []).some((s) => "PartnerSignature" in s)) continue;
        signed++;
        for (const p of op.parameters ?? []) if (p.in === "query" && p.schema?.type === "array") lists.push(`${method.toUpperCase()} ${path} ${p.name}`);
      }
    }
    expect(signed).toBeGreaterThan(50);
    expect(lists).toEqual([]);
  });

  test("a list parameter may repeat (the link inbox's event filter: repeated or comma-separated)", async () => {
    const token = await createAdminToken(h);
    const auth = { authorization: `Bearer ${token}` };
    const repeated = await h.json("/admin/ops/link-inbox/events/export.json?event=alert.fired&event=alert.resolved", { headers: auth });
    expect(repeated.status).toBe(200);
    const commas = await h.json("/admin/ops/link-inbox/events/export.json?event=alert.fired,alert.resolved", { headers: auth });
    expect(commas.status).toBe(200);
    expect(repeated.body.query.event).toEqual(commas.body.query.event);
    // …but a scalar beside it may not.
    const twice = await h.json("/admin/ops/link-inbox/events/export.json?event=alert.fired&event=alert.resolved&limit=1&limit=2", { headers: auth });
    expect(twice.status).toBe(400);
    expect(twice.body.details).toEqual([{ field: "query.limit", problem: "is given more than once; give it once" }]);
  });
});
