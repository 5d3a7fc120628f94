// Docs audit: "another partner's webhook or delivery answers 404 / not_found, as if it did not exist"
// (docs/webhooks.md:276-279) and the sandbox's "one practice state per partner" (docs/sandbox.md:116-118).
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("tenant isolation as documented", () => {
  // docs/webhooks.md:276-279
  test("another partner's webhook and deliveries are not found on every webhook route", async () => {
    h = await openTestApp();
    const a = await createKey(h, { partner: "Acme" });
    const a2 = await createKey(h, { partner: "Acme" });
    const b = await createKey(h, { partner: "Beta" });
    const w = (await signedJson(h, a, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: "https://hooks.example.com/a" } }))
      .body.webhook;
    const t = (await signedJson(h, a, "POST", `/api/partner/webhooks/${w.id}/test`)).body;
    expect((await signedJson(h, a2, "GET", "/api/partner/webhooks")).body.webhooks.map((x: any) => x.id)).toEqual([w.id]);
    expect((await signedJson(h, b, "GET", "/api/partner/webhooks")).body.webhooks).toEqual([]);
    for (const [m, p, body] of [
      ["DELETE", `/api/partner/webhooks/${w.id}`, undefined],
      ["POST", `/api/partner/webhooks/${w.id}/test`, undefined],
      ["POST", `/api/partner/webhooks/${w.id}/rotate-secret`, {}],
      ["POST", `/api/partner/webhooks/${w.id}/recover`, { since: "2025-12-01T00:00:00Z" }],
    ] as const) {
      const r = await signedJson(h, b, m, p, body === undefined ? {} : { body });
      expect([m, p, r.status, r.body.error]).toEqual([m, p, 404, "not_found"]);
    }
    const ev = await signedJson(h, b, "GET", `/api/partner/webhook-events?webhook_id=${w.id}`);
    expect(ev.body.events).toEqual([]);
    const rp = await signedJson(h, b, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [t.delivery_id, t.event_id] } });
    expect(rp.body.results.map((x: any) => [x.replayed, x.error, x.delivery_id])).toEqual([
      [false, "not_found", null],
      [false, "not_found", null],
    ]);
    expect((await signedJson(h, b, "GET", "/api/partner/webhooks/dlq")).body.dead_letter_count).toBe(0);
    // a sandbox key of the same partner does not see the live webhook either
    const s = await createKey(h, { partner: "Acme", mode: "sandbox" });
    expect((await signedJson(h, s, "GET", "/api/partner/sandbox/webhooks")).body.webhooks).toEqual([]);
  });

  // docs/sandbox.md:116-118 — one practice state per partner: keys of a partner share it, other partners do not
  test("sandbox state is per partner", async () => {
    h = await openTestApp();
    const a1 = await createKey(h, { partner: "Acme", mode: "sandbox" });
    const a2 = await createKey(h, { partner: "Acme", mode: "sandbox" });
    const b = await createKey(h, { partner: "Beta", mode: "sandbox" });
    const u = (await signedJson(h, a1, "POST", "/api/partner/sandbox/users", { body: { external_id: "sbx-1", username: "sandy" } })).body.user;
    expect((await signedJson(h, a2, "GET", `/api/partner/sandbox/users/${u.id}`)).status).toBe(200);
    expect((await signedJson(h, b, "GET", `/api/partner/sandbox/users/${u.id}`)).status).toBe(404);
    const bl = (await signedJson(h, b, "GET", "/api/partner/sandbox/users")).body.users.map((x: any) => x.external_id).sort();
    expect(bl).toEqual(["fx-alice", "fx-bob", "fx-carol"]);
    const c = await signedJson(h, b, "POST", "/api/partner/sandbox/salutes/credit", { body: { user_id: String(u.id), amount: 1, reason: "r", source: "s" } });
    expect(c.status).toBe(404);
  });
});
