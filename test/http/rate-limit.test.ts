import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(() => h?.close());

test("public routes carry rate-limit headers and answer 429 with an exact Retry-After past the limit", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "3" } });
  h.clock.set("2026-01-01T00:00:15.000Z");
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await h.request("/developers/api-errors.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("3");
    // Requests of this minute weigh until the end of the next one.
    expect(res.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-01-01T00:02:00Z") / 1000));
    remaining.push(res.headers.get("x-ratelimit-remaining")!);
  }
  expect(remaining).toEqual(["2", "1", "0"]);
  const limited = await h.json("/developers/api-errors.json");
  expect(limited.status).toBe(429);
  expect(limited.body).toMatchObject({ success: false, error: "rate_limited" });
  // 45 s to the minute's end, then 20 s until this minute's 3 requests weigh 2 (3 × 40/60): 65 s.
  expect(limited.headers.get("retry-after")).toBe("65");
  expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");

  h.clock.set("2026-01-01T00:01:19.000Z"); // one second early: still refused
  expect((await h.request("/developers/api-errors.json")).status).toBe(429);
  h.clock.set("2026-01-01T00:01:20.000Z"); // exactly Retry-After later: allowed
  expect((await h.request("/developers/api-errors.json")).status).toBe(200);
});

test("no double burst across a window edge: the limit holds over any 60 s", async () => {
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
  h.clock.set("2026-01-01T00:01:30.000Z"); // half of the previous minute still inside the last 60 s
  expect(await burst()).toBe(5);
  h.clock.set("2026-01-01T00:03:00.000Z"); // long idle: the full limit again
  expect(await burst()).toBe(10);
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
