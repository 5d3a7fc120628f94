// Docs audit (second batch): rotation overlap, Retry-After, recover's cap and the webhook list cursor rules of
// docs/webhooks.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { startReceiver } from "../support/receiver";

let h: TestApp;
let rx: ReturnType<typeof startReceiver> | undefined;
afterEach(async () => {
  rx?.stop();
  rx = undefined;
  await h?.close();
  h = undefined as unknown as TestApp;
});
const ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "1", WEBHOOK_MAX_ATTEMPTS: "5", WEBHOOK_RETRY_JITTER_PCT: "0" };

describe("docs/webhooks.md (second batch)", () => {
  // docs/webhooks.md:345-366 — the previous secret signs only during the overlap; a second rotation drops the oldest at once
  test("rotation overlap ends; rotating again drops the oldest secret", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver();
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } })).body.webhook;
    const r1 = await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/rotate-secret`, { body: { overlap_hours: 1 } });
    expect(r1.body.webhook.previous_secret_valid_until).toBe("2026-01-01T01:00:00.000Z");
    h.clock.advanceSeconds(3601);
    await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const after = rx.received.at(-1)!;
    expect(after.headers["x-webhook-signature-previous"]).toBeUndefined();
    expect(after.headers["webhook-signature"]!.split(" ").length).toBe(1);
    const r2 = await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/rotate-secret`, { body: { overlap_hours: 24 } });
    const r3 = await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/rotate-secret`, { body: { overlap_hours: 24 } });
    await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const last = rx.received.at(-1)!;
    const { createHmac } = await import("node:crypto");
    const sig = (s: string) => createHmac("sha256", s).update(`${last.headers["x-webhook-timestamp"]}.${last.rawBody}`).digest("hex");
    expect(last.headers["x-webhook-signature"]).toBe(sig(r3.body.webhook.secret));
    expect(last.headers["x-webhook-signature-previous"]).toBe(sig(r2.body.webhook.secret));
  });

  // docs/webhooks.md:207-209 — a longer Retry-After replaces the scheduled delay (up to 8 h); a shorter one does not shorten it
  test("Retry-After longer than the schedule is honoured", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 204 });
    rx.then({ status: 503, headers: { "retry-after": "3600" } });
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } })).body.webhook;
    await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const ev = (await signedJson(h, k, "GET", "/api/partner/webhook-events")).body.events[0];
    expect(ev).toMatchObject({ status: "failed", is_dead_letter: false, last_status_code: 503 });
    const next = Date.parse(ev.next_attempt_at) - h.clock.now().getTime();
    expect(next).toBeGreaterThanOrEqual(3600_000);
    expect(next).toBeLessThanOrEqual(3600_000 + 2000);
    rx.then({ status: 503, headers: { "retry-after": "1" } });
    h.clock.advanceSeconds(3601);
    await h.ctx.dispatcher.runOnce();
    const ev2 = (await signedJson(h, k, "GET", "/api/partner/webhook-events")).body.events[0];
    const next2 = Date.parse(ev2.next_attempt_at) - h.clock.now().getTime();
    // attempt 2 failed: the schedule's delay before attempt 3 is 180 s × 2 = 360 s
    expect(next2).toBeGreaterThanOrEqual(359_000);
    expect(next2).toBeLessThanOrEqual(362_000);
  });

  // docs/webhooks.md:230-246 — the nominal schedule: 180 s before attempt 2
  test("the first retry comes 180 s after a failure (jitter off)", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 500 });
    const k = await createKey(h);
    const w = (await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } })).body.webhook;
    await signedJson(h, k, "POST", `/api/partner/webhooks/${w.id}/test`);
    await h.ctx.dispatcher.runOnce();
    const ev = (await signedJson(h, k, "GET", "/api/partner/webhook-events")).body.events[0];
    const next = Date.parse(ev.next_attempt_at) - h.clock.now().getTime();
    expect(next).toBeGreaterThanOrEqual(180_000);
    expect(next).toBeLessThanOrEqual(182_000);
    expect(ev.reason_tag).toBe("http_error");
  });

  // docs/webhooks.md:310-314 and docs/http-conventions.md:159 — cursor with a non-zero offset is 400; cursors page
  test("list cursors", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    for (let i = 0; i < 3; i++)
      await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: `https://hooks.example.com/h${i}` } });
    const p1 = await signedJson(h, k, "GET", "/api/partner/webhooks?limit=2");
    expect(p1.body.pagination.has_more).toBe(true);
    const cur = p1.body.pagination.next_cursor;
    expect(typeof cur).toBe("string");
    const p2 = await signedJson(h, k, "GET", `/api/partner/webhooks?limit=2&cursor=${encodeURIComponent(cur)}`);
    expect(p2.body.webhooks.length).toBe(1);
    expect(p2.body.webhooks[0].id).not.toBe(p1.body.webhooks[0].id);
    const both = await signedJson(h, k, "GET", `/api/partner/webhooks?limit=2&offset=1&cursor=${encodeURIComponent(cur)}`);
    expect([both.status, both.body.error]).toEqual([400, "invalid_query"]);
    const forged = await signedJson(h, k, "GET", "/api/partner/webhooks?cursor=bm9wZQ");
    expect([forged.status, forged.body.error]).toEqual([400, "invalid_query"]);
  });
});
