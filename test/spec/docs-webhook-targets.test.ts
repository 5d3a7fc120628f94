// Docs audit: docs/webhooks.md "Target URL policy" — every spelling of a local host is refused at creation, for
// partner webhooks and status subscribers alike.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const REFUSED = [
  "http://localhost/h",
  "http://localhost./h",
  "http://LOCALHOST/h",
  "http://app.localhost/h",
  "http://db.internal/h",
  "http://intranet/h",
  "http://127.0.0.1/h",
  "http://0x7f000001/h",
  "http://2130706433/h",
  "http://127.1/h",
  "http://0177.0.0.1/h",
  "http://[::1]/h",
  "http://[::ffff:127.0.0.1]/h",
  "http://10.0.0.1/h",
  "http://192.168.1.1/h",
  "http://172.16.0.1/h",
  "http://169.254.169.254/latest/meta-data",
  "http://100.64.0.1/h",
  "http://[fd00::1]/h",
  "http://224.0.0.1/h",
  "https://user:pass@hooks.example.com/h",
  "https://hooks.example.com/h#frag",
  "ftp://hooks.example.com/h",
  `https://hooks.example.com/${"a".repeat(2030)}`,
];

describe("docs/webhooks.md — Target URL policy", () => {
  // docs/webhooks.md:503-524
  test("refused spellings at creation (partner webhooks and status subscribers)", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    for (const url of REFUSED) {
      const r = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: url } });
      expect([url, r.status, r.body.error]).toEqual([url, 400, "invalid_payload"]);
      const s = await h.json("/admin/status/subscribers", jsonInit("POST", { url }, auth));
      expect([url, s.status, s.body.error]).toEqual([url, 400, "invalid_payload"]);
    }
    const ok = await signedJson(h, k, "POST", "/api/partner/webhooks", {
      body: { event_type: "webhook.test", target_url: `https://hooks.example.com/${"a".repeat(2020)}` },
    });
    expect(ok.status).toBe(201);
    const msg = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: "http://0x7f000001/h" } });
    expect(msg.body.message).toContain("127.0.0.1");
  });
});
