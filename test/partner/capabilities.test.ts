import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("GET /api/partner/capabilities: the signing window", () => {
  test("names the window the signature check applies (SIGNATURE_SKEW_SECONDS), as /trust.json does", async () => {
    h = await openTestApp({ env: { SIGNATURE_SKEW_SECONDS: "120" } });
    const key = await createKey(h);
    const caps = await signedJson(h, key, "GET", "/api/partner/capabilities");
    expect(caps.status).toBe(200);
    expect(caps.body.signing.timestamp_skew_seconds).toBe(120);
    const trust = await h.json("/trust.json");
    expect(trust.body.signing.partner_requests.timestamp_skew_seconds).toBe(120);
    // The window it names is the one applied: 119 s old passes, 121 s old is refused.
    const now = Math.floor(h.clock.now().getTime() / 1000);
    expect((await signedJson(h, key, "GET", "/api/partner/capabilities", { timestamp: now - 119 })).status).toBe(200);
    const late = await signedJson(h, key, "GET", "/api/partner/capabilities", { timestamp: now - 121 });
    expect(late.status).toBe(401);
  });

  test("the default window is 300 s", async () => {
    h = await openTestApp();
    const caps = await signedJson(h, await createKey(h), "GET", "/api/partner/capabilities");
    expect(caps.body.signing.timestamp_skew_seconds).toBe(300);
  });
});
