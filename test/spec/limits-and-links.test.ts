// Spec conformance: partner rate limits count per key, not per address, and every route a sandbox key's answers
// link to answers that key. Each test names the statement it holds Herald to; each failed before its fix.
import { afterEach, describe, expect, test } from "bun:test";
import { afterResponses, openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("RATE_LIMIT_PARTNER_PER_MIN is a limit per key (docs/design.md §2; docs/partner-auth.md §10)", () => {
  // docs/design.md §2: "RATE_LIMIT_PARTNER_PER_MIN (6,000 per key, every other signed live route …)".
  // docs/partner-auth.md §10: "Limits count requests per key id"; "live key, every signed route except the
  // webhook routes | 6000 | RATE_LIMIT_PARTNER_PER_MIN".
  test("one partner spending its budget does not refuse another partner's first request from the same address", async () => {
    h = await openTestApp({ env: { RATE_LIMIT_PARTNER_PER_MIN: "5" } });
    const a = await createKey(h, { partner: "A" });
    const b = await createKey(h, { partner: "B" });
    for (let i = 0; i < 5; i++) expect((await signedJson(h, a, "GET", "/api/partner/capabilities")).status).toBe(200);
    const first = await signedJson(h, b, "GET", "/api/partner/capabilities");
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit")).toBe("5");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  test("calls to the webhook routes (their own 120/min group) do not spend the key's general budget", async () => {
    h = await openTestApp({ env: { RATE_LIMIT_PARTNER_PER_MIN: "5" } });
    const k = await createKey(h);
    for (let i = 0; i < 5; i++) expect((await signedJson(h, k, "GET", "/api/partner/webhooks")).status).toBe(200);
    expect((await signedJson(h, k, "GET", "/api/partner/capabilities")).status).toBe(200);
  });

  // Spec "Usage analytics": request_metrics.rate_limited_requests; docs/partner-status.md: "rate_limited_requests
  // = 429 (also counted as errors)".
  test("a live key's own 429s on the general routes are counted in usage rate_limited_requests", async () => {
    h = await openTestApp({ env: { RATE_LIMIT_PARTNER_PER_MIN: "3" } });
    const k = await createKey(h);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await signedJson(h, k, "GET", "/api/partner/capabilities")).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    await afterResponses(10);
    h.clock.advanceSeconds(120);
    const u = (await signedJson(h, k, "GET", "/api/partner/analytics/usage?hours=1")).body;
    expect(u.request_metrics.rate_limited_requests).toBe(2);
    expect(u.request_metrics.total_requests).toBe(5);
  });
});

describe("capabilities links a sandbox key only to routes it may call", () => {
  // Spec "Capabilities": docs (links); "Partner status": carries key_mode (sandbox or live); discovery order
  // capabilities → status → token-status → errors.json. For a sandbox key Herald adjusts docs.token_status to the
  // sandbox route but leaves docs.status = /api/partner/status, which answers that key 403 (status-routes.ts).
  test("every partner route in a sandbox key's capabilities.docs answers that key", async () => {
    h = await openTestApp();
    const sb = await createKey(h, { mode: "sandbox" });
    const docs = (await signedJson(h, sb, "GET", "/api/partner/capabilities")).body.docs as Record<string, string>;
    const partnerLinks = Object.values(docs).filter((p) => p.startsWith("/api/partner/"));
    expect(partnerLinks).toContain("/api/partner/status");
    for (const p of partnerLinks) expect([p, (await signedJson(h, sb, "GET", p)).status]).toEqual([p, 200]);
  });
  test("every partner route the sandbox promotion report's checklist links to answers the sandbox key", async () => {
    h = await openTestApp();
    const sb = await createKey(h, { mode: "sandbox" });
    const report = (await signedJson(h, sb, "GET", "/api/partner/sandbox/promotion-report")).body;
    const links = (report.checklist as Array<{ links?: Record<string, string> }>).flatMap((c) => Object.values(c.links ?? {}));
    const partnerLinks = [...new Set(links.filter((p) => p.startsWith("/api/partner/") && !/[A-Z]{2,}_ID/.test(p)))];
    expect(partnerLinks).toContain("/api/partner/analytics/usage");
    // A POST-only route answers GET with 405; what must not happen is the key being refused (403).
    for (const p of partnerLinks) expect([p, (await signedJson(h, sb, "GET", p)).status]).not.toEqual([p, 403]);
  });
});
