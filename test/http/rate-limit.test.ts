import { afterEach, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(() => h?.close());

test("public routes carry rate-limit headers and answer 429 with Retry-After past the limit", async () => {
  h = createTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "3" } });
  h.clock.set("2026-01-01T00:00:15.000Z");
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await h.request("/developers/api-errors.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("3");
    expect(res.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-01-01T00:01:00Z") / 1000));
    remaining.push(res.headers.get("x-ratelimit-remaining")!);
  }
  expect(remaining).toEqual(["2", "1", "0"]);
  const limited = await h.json("/developers/api-errors.json");
  expect(limited.status).toBe(429);
  expect(limited.body).toMatchObject({ success: false, error: "rate_limited" });
  expect(limited.headers.get("retry-after")).toBe("45");
  expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");

  // The next window starts fresh.
  h.clock.set("2026-01-01T00:01:00.000Z");
  expect((await h.request("/developers/api-errors.json")).status).toBe(200);
});

test("limits are per client IP (X-Forwarded-For trusted only with TRUST_PROXY=1)", async () => {
  h = createTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "1", TRUST_PROXY: "1" } });
  const from = (ip: string) => h.request("/developers/api-errors.json", { headers: { "x-forwarded-for": ip } });
  expect((await from("203.0.113.1")).status).toBe(200);
  expect((await from("203.0.113.1")).status).toBe(429);
  expect((await from("203.0.113.2")).status).toBe(200);
});

test("untrusted X-Forwarded-For cannot dodge the limit", async () => {
  h = createTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "1" } });
  expect((await h.request("/developers/api-errors.json", { headers: { "x-forwarded-for": "198.51.100.1" } })).status).toBe(200);
  expect((await h.request("/developers/api-errors.json", { headers: { "x-forwarded-for": "198.51.100.2" } })).status).toBe(429);
});

test("0 turns the limit off and non-public routes are not limited per IP", async () => {
  h = createTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
  for (let i = 0; i < 5; i++) {
    const res = await h.request("/developers/api-errors.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
  }
  expect((await h.request("/healthz")).headers.get("x-ratelimit-limit")).toBeNull();
});
