import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(() => h?.close());

test("public routes carry rate-limit headers and answer 429 with an exact Retry-After past the limit", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "3" } });
  h.clock.set("2026-01-01T00:00:15.400Z");
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await h.request("/developers/api-errors.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("3");
    // The second 00:00:15 counts through 00:01:15; from 00:01:16 these requests have left the window.
    expect(res.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-01-01T00:01:16Z") / 1000));
    remaining.push(res.headers.get("x-ratelimit-remaining")!);
  }
  expect(remaining).toEqual(["2", "1", "0"]);
  h.clock.set("2026-01-01T00:00:40.000Z");
  const limited = await h.json("/developers/api-errors.json");
  expect(limited.status).toBe(429);
  expect(limited.body).toMatchObject({ success: false, error: "rate_limited" });
  // Retry-After and X-RateLimit-Reset name the same moment: 00:01:16, 36 s from now.
  expect(limited.headers.get("retry-after")).toBe("36");
  expect(limited.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-01-01T00:01:16Z") / 1000));
  expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
  expect(limited.body.message).toContain("retry after 36 s");

  h.clock.set("2026-01-01T00:01:15.999Z"); // one millisecond early: still refused, and not counted
  expect((await h.request("/developers/api-errors.json")).status).toBe(429);
  h.clock.set("2026-01-01T00:01:16.000Z"); // exactly Retry-After later: allowed
  expect((await h.request("/developers/api-errors.json")).status).toBe(200);
});

test("the limit holds over any 60 s: no double burst across a minute's edge, none half a minute later", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "10" } });
  const burst = async () => {
    let ok = 0;
    for (let i = 0; i < 10; i++) if ((await h.request("/developers/api-errors.json")).status === 200) ok++;
    return ok;
  };
  h.clock.set("2026-01-01T00:00:59.000Z");
  expect(await burst()).toBe(10);
  h.clock.set("2026-01-01T00:01:00.500Z"); // a fixed window would allow 10 more here
  expect(await burst()).toBe(0);
  h.clock.set("2026-01-01T00:01:30.000Z"); // a weighted estimate of two minutes would allow 5 more here
  expect(await burst()).toBe(0);
  h.clock.set("2026-01-01T00:01:59.999Z"); // the 10 of 00:00:59 still count through 00:01:59
  expect(await burst()).toBe(0);
  h.clock.set("2026-01-01T00:02:00.000Z");
  expect(await burst()).toBe(10);
});

test("a steady client gets exactly the limit per 60 s, whatever the phase", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "6" } });
  // One request every 7 s for five minutes: every span of 60 s may hold at most 6 admitted ones.
  const admitted: number[] = [];
  const t0 = Date.parse("2026-01-01T00:00:03.250Z");
  for (let i = 0; i < 43; i++) {
    h.clock.set(new Date(t0 + i * 7000).toISOString());
    if ((await h.request("/developers/api-errors.json")).status === 200) admitted.push(t0 + i * 7000);
  }
  for (const start of admitted) expect(admitted.filter((t) => t >= start && t < start + 60_000).length).toBeLessThanOrEqual(6);
  // And it is not stricter than it must be: whole seconds cost at most one extra second, so 6 of every 9 go through.
  expect(admitted.length).toBeGreaterThanOrEqual(Math.floor((43 * 6) / 9));
});

test("limits are per client IP (X-Forwarded-For trusted only with TRUST_PROXY=1)", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "1", TRUST_PROXY: "1" } });
  const from = (ip: string) => h.request("/developers/api-errors.json", { headers: { "x-forwarded-for": ip } });
  expect((await from("203.0.113.1")).status).toBe(200);
  expect((await from("203.0.113.1")).status).toBe(429);
  expect((await from("203.0.113.2")).status).toBe(200);
});

test("untrusted X-Forwarded-For cannot dodge the limit", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "1" } });
  expect((await h.request("/developers/api-errors.json", { headers: { "x-forwarded-for": "198.51.100.1" } })).status).toBe(200);
  expect((await h.request("/developers/api-errors.json", { headers: { "x-forwarded-for": "198.51.100.2" } })).status).toBe(429);
});

test("0 turns the limit off and non-public routes are not limited per IP", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
  for (let i = 0; i < 5; i++) {
    const res = await h.request("/developers/api-errors.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
  }
  expect((await h.request("/healthz")).headers.get("x-ratelimit-limit")).toBeNull();
});

test("the published API documents are public routes: limited per IP like the rest", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "2" } });
  h.clock.set("2026-01-01T00:00:00.000Z");
  for (const path of ["/api/openapi.yaml", "/api/openapi.json", "/api/openapi-transparency.yaml"]) {
    // One limit per IP across every public route: the third public request of the minute is refused.
    const first = await h.request(path);
    expect([path, first.status, first.headers.get("x-ratelimit-limit"), first.headers.get("x-ratelimit-remaining")]).toEqual([path, 200, "2", "1"]);
    expect((await h.request(path)).status).toBe(200);
    const refused = await h.json(path);
    expect([path, refused.status, refused.body.error]).toEqual([path, 429, "rate_limited"]);
    expect(refused.headers.get("retry-after")).toBe("61");
    h.clock.set(new Date(h.clock.now().getTime() + 61_000).toISOString());
  }
});
