// The sandbox twin of the webhook-events list shows each delivery's replay history, and its replay route keeps
// the note — exactly as the live routes do (src/webhooks/deliveries.ts). One test drives both modes side by side.
import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { startReceiver, type Receiver } from "../support/receiver";
import { drain, SANDBOX, sandboxApp, sandboxKey } from "./support";

let h: TestApp;
let rx: Receiver;
afterEach(async () => {
  rx?.stop();
  await h?.close();
});

/** Webhook, one test delivery, two replays (the second with a note) in the routes under `prefix`. */
async function replayedTwice(key: TestKey, prefix: string) {
  const created = await signedJson(h, key, "POST", `${prefix}/webhooks`, { body: { event_type: "webhook.test", target_url: rx.url() } });
  expect(created.status).toBe(201);
  const t = await signedJson(h, key, "POST", `${prefix}/webhooks/${created.body.webhook.id}/test`);
  await drain(h);
  const replays = [];
  for (const body of [
    { event_ids: [t.body.delivery_id], reason_tag: "receiver_fix" },
    { event_ids: [t.body.delivery_id], reason_tag: "backfill", note: "after the outage of 1 Jan" },
  ]) {
    h.clock.advanceSeconds(10);
    const r = await signedJson(h, key, "POST", `${prefix}/webhook-events/replay`, { body });
    expect(r.status).toBe(200);
    replays.push(r.body);
    await drain(h);
  }
  const list = await signedJson(h, key, "GET", `${prefix}/webhook-events`);
  expect(list.status).toBe(200);
  return { replays, events: list.body.events as Array<Record<string, any>>, deliveryId: t.body.delivery_id as number };
}

describe("sandbox webhook-events: replay history and note, as live", () => {
  test("the list carries `replays` (oldest first, with notes) and the replay answer echoes the note", async () => {
    h = await sandboxApp();
    rx = startReceiver();
    const sandbox = await replayedTwice(await sandboxKey(h), SANDBOX);
    const live = await replayedTwice(await createKey(h, { partner: "LiveCo" }), "/api/partner");

    const expected = [
      { reason_tag: "receiver_fix", note: null, replayed_at: "2026-01-01T00:00:10.000Z" },
      { reason_tag: "backfill", note: "after the outage of 1 Jan", replayed_at: "2026-01-01T00:00:20.000Z" },
    ];
    const sandboxEvent = sandbox.events.find((e) => e.id === sandbox.deliveryId)!;
    expect(sandboxEvent.replays).toEqual(expected);
    expect(sandbox.replays[1]).toMatchObject({ note: "after the outage of 1 Jan", reason_tag: "backfill", replayed_count: 1 });

    // The live list shows the same history for the same steps (its clock ran on by 20 s meanwhile).
    const liveEvent = live.events.find((e) => e.id === live.deliveryId)!;
    expect(liveEvent.replays.map((r: { reason_tag: string; note: string | null }) => [r.reason_tag, r.note])).toEqual(
      expected.map((r) => [r.reason_tag, r.note]),
    );
    expect(Object.keys(sandboxEvent).sort()).toEqual(Object.keys(liveEvent).sort());

    // And the note is stored on the sandbox replay row itself, under the sandbox mode.
    const rows = await h.ctx.store.all("SELECT mode, reason_tag, note FROM webhook_replays WHERE delivery_id = ? ORDER BY id", [sandbox.deliveryId]);
    expect(rows).toEqual([
      { mode: "sandbox", reason_tag: "receiver_fix", note: null },
      { mode: "sandbox", reason_tag: "backfill", note: "after the outage of 1 Jan" },
    ]);
  });

  test("a delivery never replayed lists an empty history", async () => {
    h = await sandboxApp();
    rx = startReceiver();
    const key = await sandboxKey(h);
    const created = await signedJson(h, key, "POST", `${SANDBOX}/webhooks`, { body: { event_type: "webhook.test", target_url: rx.url() } });
    await signedJson(h, key, "POST", `${SANDBOX}/webhooks/${created.body.webhook.id}/test`);
    await drain(h);
    const list = await signedJson(h, key, "GET", `${SANDBOX}/webhook-events`);
    expect(list.body.events.map((e: { replays: unknown[] }) => e.replays)).toEqual([[]]);
  });
});
