// Second audit: behaviour that contradicts the service interface. Each test FAILS on the current code.
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const hammer = async (path: string, n: number) => {
  const statuses: number[] = [];
  let limitHeader: string | null = null;
  for (let i = 0; i < n; i++) {
    const r = await h.request(path);
    limitHeader ??= r.headers.get("x-ratelimit-limit");
    statuses.push(r.status);
    await r.arrayBuffer();
  }
  return { limitHeader, refused: statuses.filter((s) => s === 429).length };
};

// Spec "Limits": "Public API endpoints | 90 per minute | RATE_LIMIT_PUBLIC_API_PER_MIN" and "Partner webhook
// endpoints | 120 per minute"; "Rate-limit headers: X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset;
// Retry-After on 429". Herald serves GET /api/partner/errors.json and GET /api/partner/webhooks/event-types without
// any credential (docs/partner-auth.md "The error catalog is public"; docs/webhooks.md "Public: no key needed"),
// yet neither is in any rate-limit group: an anonymous client may call them without bound, while the very same
// catalog at /developers/api-errors.json is limited at 90 per minute. The same holds for the portal's home page
// GET /developers (docs/developers-portal.md: "as every /developers/ route").
test("unauthenticated partner catalogs (errors.json, webhooks/event-types) and /developers are under the public per-IP limit", async () => {
  h = await openTestApp();
  const reference = await hammer("/developers/api-errors.json", 91);
  expect(reference).toEqual({ limitHeader: "90", refused: 1 });
  for (const p of ["/api/partner/errors.json", "/api/partner/webhooks/event-types", "/developers"]) {
    h.clock.advance(61_000);
    const got = await hammer(p, 91);
    expect(`${p} ${got.limitHeader} ${got.refused}`).toBe(`${p} 90 1`);
  }
});
