// Webhook deliveries queued and not yet dispatched, for the tests that count what the dispatcher's own steps do:
// the webhook is created through the partner API, and its events are emitted straight through the outbox (the
// test route would nudge the dispatcher before the test looks).
import { expect } from "bun:test";
import { emitEvent } from "../../src/webhooks/outbox";
import type { TestApp } from "../support/app";
import { signedJson, type TestKey } from "../support/partner";

/** A webhook of Acme's (live) for `webhook.test` at `targetUrl`; its id. */
export async function acmeWebhook(h: TestApp, key: TestKey, targetUrl: string): Promise<number> {
  const created = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: targetUrl } });
  expect(created.status).toBe(201);
  await h.ctx.dispatcher.idle();
  return created.body.webhook.id as number;
}

/** `n` `webhook.test` events for that webhook, one transaction each: their delivery ids, in order. */
export async function queueEvents(h: TestApp, webhookId: number, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const ev = await h.ctx.store.tx((t) => emitEvent(t, h.ctx, { partner: "Acme", mode: "live" }, "webhook.test", { webhook_id: webhookId }, { webhookId }));
    expect(ev.deliveryIds).toHaveLength(1);
    ids.push(ev.deliveryIds[0]!);
  }
  return ids;
}
