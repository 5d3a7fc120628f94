import { afterEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { csrfOf, formPost, pageAs, signedInCookie } from "../support/console";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";

// The console's dead-letters page over a real dead letter: a receiver on 127.0.0.1 that answers 500 until the
// delivery gives up; the page lists it with its last answer; a replay needs a reason (kept in the delivery's
// replay history and the audit row); the replayed delivery reaches the receiver; CSRF is required.

const PAGE = "/admin/console/dead-letters";
let h: TestApp;
let rx: Receiver;
afterEach(() => {
  rx?.stop();
  h?.close();
});

describe("GET /admin/console/dead-letters", () => {
  test("a dead letter listed; replayed with a reason from the form; delivered; CSRF and a reason required", async () => {
    h = createTestApp({
      env: {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
        WEBHOOK_TIMEOUT_SECONDS: "1",
        WEBHOOK_MAX_ATTEMPTS: "2",
        WEBHOOK_RETRY_BASE_SECONDS: "60",
        WEBHOOK_RETRY_JITTER_PCT: "0",
      },
    });
    rx = startReceiver();
    const key = createKey(h, { partner: "Acme" });
    const hook = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } });
    rx.then({ status: 500 }, { status: 500 });
    const sent = await signedJson(h, key, "POST", `/api/partner/webhooks/${hook.body.webhook.id}/test`);
    for (let i = 0; i < 2; i++) {
      await h.ctx.dispatcher.runOnce();
      h.clock.advanceSeconds(600);
    }
    const id = sent.body.delivery_id as number;
    const cookie = await signedInCookie(h, createAdminToken(h, "ops"));
    const { status, html } = await pageAs(h, PAGE, cookie);
    expect(status).toBe(200);
    expect(html).toContain(`id="delivery-${id}"`);
    expect(html).toContain("HTTP 500");
    expect(html).toContain("Acme (live)");
    expect((await pageAs(h, `${PAGE}?partner=Globex`, cookie)).html).toContain("No dead letter.");
    const csrf = csrfOf(html);

    expect((await formPost(h, `${PAGE}/${id}/replay`, cookie, { reason: "receiver fixed" })).status).toBe(403);
    const noReason = await formPost(h, `${PAGE}/${id}/replay`, cookie, { reason: "  ", csrf_token: csrf });
    expect(noReason.status).toBe(400);
    const done = await formPost(h, `${PAGE}/${id}/replay`, cookie, { reason: "receiver fixed <ticket 42>", csrf_token: csrf });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`${PAGE}?done=${id}`);
    expect((await pageAs(h, done.headers.get("location")!, cookie)).html).toContain(`Delivery #${id} queued again.`);
    // Queued again: a second replay is refused as already pending; an unknown id is 404.
    expect((await formPost(h, `${PAGE}/${id}/replay`, cookie, { reason: "again", csrf_token: csrf })).status).toBe(409);
    expect((await formPost(h, `${PAGE}/999999/replay`, cookie, { reason: "x", csrf_token: csrf })).status).toBe(404);
    const replay = h.ctx.db.sqlite.query("SELECT reason_tag, note FROM webhook_replays WHERE delivery_id = ?").get(id);
    expect(replay).toEqual({ reason_tag: "operator_replay", note: "receiver fixed <ticket 42>" });
    const audit = h.ctx.db.sqlite.query("SELECT details FROM admin_audit WHERE action = 'webhook_event.replay' ORDER BY id LIMIT 1").get() as {
      details: string;
    };
    expect(JSON.parse(audit.details).note).toBe("receiver fixed <ticket 42>");
    rx.then({ status: 200 });
    await h.ctx.dispatcher.runOnce();
    expect(h.ctx.db.sqlite.query("SELECT status FROM webhook_deliveries WHERE id = ?").get(id)).toEqual({ status: "succeeded" });
  });
});
