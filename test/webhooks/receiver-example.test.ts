// The partner-facing example receiver (docs/examples/webhook-receiver.ts, shown in docs/webhooks.md) against the
// docs/design.md §3 outgoing vector and against a real signed delivery from Herald's dispatcher.
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expectedSignature, SeenIds, startWebhookReceiver, verifyWebhook, type HeraldEvent } from "../../docs/examples/webhook-receiver";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";

const VECTOR = {
  secret: "whsec_test_0123456789",
  timestamp: "1767225600",
  body: '{"event_id":"evt_01","event_type":"salutes.credit","data":{"user_id":"42","delta":12.5}}',
  signature: "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81",
};
const NOW = 1767225600;

describe("verifyWebhook", () => {
  test("accepts the docs/design.md §3 outgoing vector, as a string and as bytes, in any hex case", () => {
    const base = { timestamp: VECTOR.timestamp, signature: VECTOR.signature, secrets: [VECTOR.secret], nowSeconds: NOW };
    expect(verifyWebhook({ ...base, rawBody: VECTOR.body })).toEqual({ ok: true, matched: "signature", secretIndex: 0 });
    expect(verifyWebhook({ ...base, rawBody: new TextEncoder().encode(VECTOR.body) }).ok).toBe(true);
    expect(verifyWebhook({ ...base, rawBody: VECTOR.body, signature: VECTOR.signature.toUpperCase() }).ok).toBe(true);
  });

  test("refuses a changed body, timestamp or secret, a stale or future timestamp, and malformed input", () => {
    const base = { rawBody: VECTOR.body, timestamp: VECTOR.timestamp, signature: VECTOR.signature, secrets: [VECTOR.secret], nowSeconds: NOW };
    expect(verifyWebhook({ ...base, rawBody: VECTOR.body.replace("12.5", "12.50") })).toEqual({ ok: false, reason: "signature_mismatch" });
    expect(verifyWebhook({ ...base, rawBody: JSON.stringify(JSON.parse(VECTOR.body), null, 1) })).toEqual({ ok: false, reason: "signature_mismatch" });
    expect(verifyWebhook({ ...base, timestamp: "1767225601", nowSeconds: NOW })).toEqual({ ok: false, reason: "signature_mismatch" });
    expect(verifyWebhook({ ...base, secrets: ["whsec_other"] })).toEqual({ ok: false, reason: "signature_mismatch" });
    expect(verifyWebhook({ ...base, nowSeconds: NOW + 300 }).ok).toBe(true);
    expect(verifyWebhook({ ...base, nowSeconds: NOW + 301 })).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(verifyWebhook({ ...base, nowSeconds: NOW - 301 })).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(verifyWebhook({ ...base, timestamp: "1767225600.0" })).toEqual({ ok: false, reason: "invalid_timestamp" });
    expect(verifyWebhook({ ...base, timestamp: null })).toEqual({ ok: false, reason: "missing_headers" });
    expect(verifyWebhook({ ...base, signature: undefined })).toEqual({ ok: false, reason: "missing_headers" });
    expect(verifyWebhook({ ...base, signature: "zz" + VECTOR.signature.slice(2) })).toEqual({ ok: false, reason: "malformed_signature" });
    expect(verifyWebhook({ ...base, signature: VECTOR.signature + "00" })).toEqual({ ok: false, reason: "malformed_signature" });
  });

  test("during a rotation: the previous-secret header, or the receiver's previous secret, is accepted", () => {
    const base = { rawBody: VECTOR.body, timestamp: VECTOR.timestamp, nowSeconds: NOW };
    // Herald signs with the new secret and (X-Webhook-Signature-Previous) the old one; the receiver still holds the old.
    expect(verifyWebhook({ ...base, signature: "ab".repeat(32), signaturePrevious: VECTOR.signature, secrets: [VECTOR.secret] })).toEqual({
      ok: true,
      matched: "signature_previous",
      secretIndex: 0,
    });
    // The receiver already holds both secrets, new first.
    expect(verifyWebhook({ ...base, signature: VECTOR.signature, secrets: ["whsec_new", VECTOR.secret] })).toEqual({
      ok: true,
      matched: "signature",
      secretIndex: 1,
    });
  });

  test("docs/webhooks.md shows the example file verbatim", () => {
    const root = join(import.meta.dir, "..", "..");
    const file = readFileSync(join(root, "docs", "examples", "webhook-receiver.ts"), "utf8");
    const doc = readFileSync(join(root, "docs", "webhooks.md"), "utf8");
    const m = /<!-- receiver:begin[^>]*-->\n```ts\n([\s\S]*?)```\n<!-- receiver:end -->/.exec(doc);
    expect(m?.[1]).toBe(file);
  });

  test("SeenIds remembers an id for its TTL only", () => {
    const seen = new SeenIds(1000);
    expect(seen.claim("evt_a", 0)).toBe(true);
    expect(seen.claim("evt_a", 999)).toBe(false);
    expect(seen.claim("evt_a", 1000)).toBe(true);
    seen.release("evt_a");
    expect(seen.claim("evt_a", 1001)).toBe(true);
  });
});

describe("the example receiver against a real delivery", () => {
  let h: TestApp | undefined;
  let server: ReturnType<typeof startWebhookReceiver> | undefined;
  afterEach(async () => {
    server?.stop(true);
    await h?.close();
    server = undefined;
    h = undefined;
  });

  test("accepts Herald's signed delivery and dedupes a replay of the same body and headers", async () => {
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" } });
    const app = h;
    const handled: Array<{ event: HeraldEvent; timestamp: string; rawBody: string }> = [];
    const secrets: string[] = []; // filled once Herald returns the webhook's secret; read on every request
    server = startWebhookReceiver({
      port: 0,
      hostname: "127.0.0.1",
      secrets,
      handleEvent: (event, d) => void handled.push({ event, ...d }),
      now: () => Math.floor(app.clock.now().getTime() / 1000), // Herald stamps deliveries with the test app's clock
      log: () => {},
    });
    const url = `http://127.0.0.1:${server.port}/webhooks/herald`;
    const key = await createKey(app);
    const created = await signedJson(app, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: url } });
    expect(created.status).toBe(201);
    const webhook = created.body.webhook as { id: number; secret: string };
    secrets.push(webhook.secret);

    const t = await signedJson(app, key, "POST", `/api/partner/webhooks/${webhook.id}/test`);
    expect(t.status).toBe(200);
    await app.ctx.dispatcher.runOnce();

    // Herald recorded the example's 200 and its answer; the handler ran once, after the answer.
    const attempt = await app.ctx.store.get(
      "SELECT d.status, a.status_code, a.response_excerpt FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id WHERE d.id = ?",
      [t.body.delivery_id],
    );
    expect(attempt).toEqual({ status: "succeeded", status_code: 200, response_excerpt: '{"received":true}' });
    for (let i = 0; i < 100 && handled.length === 0; i++) await Bun.sleep(5);
    expect(handled).toHaveLength(1);
    expect(handled[0]!.event).toMatchObject({ event_id: t.body.event_id, event_type: "webhook.test", data: { webhook_id: webhook.id } });
    expect(handled[0]!.event.sandbox).toBeUndefined();

    // The same delivery again, byte for byte (HMAC is deterministic: same secret, timestamp and body give the
    // signature Herald sent): accepted with 200 so Herald stops, but not handled twice.
    const { timestamp, rawBody } = handled[0]!;
    const headers = {
      "content-type": "application/json",
      "x-webhook-id": t.body.event_id,
      "x-webhook-event": "webhook.test",
      "x-webhook-timestamp": timestamp,
      "x-webhook-signature": expectedSignature(webhook.secret, timestamp, rawBody),
    };
    const again = await fetch(url, { method: "POST", headers, body: rawBody });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ received: true, duplicate: true });

    // A real second delivery of the same event (an operator replay) is deduped too.
    const replay = await app.json(`/admin/partners/webhook-events/${t.body.event_id}/replay`, {
      method: "POST",
      headers: { authorization: `Bearer ${await createAdminToken(app)}` },
    });
    expect(replay.body).toMatchObject({ success: true, requeued: 1 });
    await app.ctx.dispatcher.runOnce();
    const last = await app.ctx.store.get<{ response_excerpt: string }>(
      "SELECT response_excerpt FROM webhook_attempts WHERE delivery_id = ? ORDER BY id DESC LIMIT 1",
      [t.body.delivery_id],
    );
    expect(JSON.parse(last!.response_excerpt)).toEqual({ received: true, duplicate: true });
    await Bun.sleep(20);
    expect(handled).toHaveLength(1);

    // Tampered bytes and a stale timestamp are refused.
    const tampered = await fetch(url, { method: "POST", headers, body: rawBody.replace("Test delivery", "Test deliverY") });
    expect(tampered.status).toBe(401);
    expect(await tampered.json()).toEqual({ error: "signature_mismatch" });
    app.clock.advanceSeconds(301);
    const stale = await fetch(url, { method: "POST", headers, body: rawBody });
    expect(stale.status).toBe(401);
    expect(await stale.json()).toEqual({ error: "stale_timestamp" });
  });
});
