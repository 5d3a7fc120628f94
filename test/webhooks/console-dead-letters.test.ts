import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import {
  BROWSER_ACCEPT,
  csrfOf,
  currentNavOf,
  errorLineOf,
  exportLinksOf,
  formOf,
  formPost,
  hrefOf,
  pageAs,
  signedInCookie,
  tableOf,
  textById,
} from "../support/console";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";

// The console's dead-letters page over real dead letters: a receiver on 127.0.0.1 answers 500 until deliveries
// give up (WEBHOOK_MAX_ATTEMPTS=2). The page lists them (filtered, paged, escaped); a replay needs a reason (kept
// in the delivery's replay history — what the partner's JSON API shows — and as `note` in the audit row) and the
// session's CSRF token; only dead letters are replayed (unknown 404, delivered or queued again 409); the replayed
// delivery reaches the receiver; the exports answer with the session.

const PAGE = "/admin/console/dead-letters";
const ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
  WEBHOOK_TIMEOUT_SECONDS: "1",
  WEBHOOK_MAX_ATTEMPTS: "2",
  WEBHOOK_RETRY_BASE_SECONDS: "60",
  WEBHOOK_RETRY_JITTER_PCT: "0",
};
let h: TestApp;
let rx: Receiver;
afterEach(async () => {
  rx?.stop();
  await h?.close();
});

async function hookFor(key: TestKey): Promise<number> {
  const hook = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx.url() } });
  expect(hook.status).toBe(201);
  return hook.body.webhook.id as number;
}

/** Queues one webhook.test delivery; its delivery id. */
async function testDelivery(key: TestKey, hookId: number): Promise<number> {
  const sent = await signedJson(h, key, "POST", `/api/partner/webhooks/${hookId}/test`);
  expect(sent.status).toBe(200);
  return sent.body.delivery_id as number;
}

/** Every attempt of everything queued, with the retry wait passed in between (two attempts: dead). */
async function attemptAll() {
  for (let i = 0; i < 2; i++) {
    await h.ctx.dispatcher.runOnce();
    h.clock.advanceSeconds(600);
  }
}

const statusOf = async (id: number) => (await h.ctx.store.get<{ status: string }>("SELECT status FROM webhook_deliveries WHERE id = ?", [id]))!.status;
const replays = async () => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM webhook_replays"))!.n;
/** The deliveries listed, top to bottom (their row ids). */
const listed = (html: string) => tableOf(html, "dead-rows").map((r) => r.id);
const audits = () =>
  h.ctx.store.all<{ actor: string; target: string; details: string }>(
    "SELECT actor, target, details FROM admin_audit WHERE action = 'webhook_event.replay' ORDER BY id",
  );

describe("GET /admin/console/dead-letters", () => {
  test("lists every partner's dead letters, filters them, escapes what it echoes; sign-in, bearer, exports", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 500 });
    const acme = await createKey(h, { partner: "Acme" });
    const globex = await createKey(h, { partner: "Globex" });
    const a = await testDelivery(acme, await hookFor(acme));
    const g = await testDelivery(globex, await hookFor(globex));
    await attemptAll();
    expect([await statusOf(a), await statusOf(g)]).toEqual(["dead_letter", "dead_letter"]);

    // No credentials: to the sign-in page, back here after.
    const anon = await h.request(`${PAGE}?partner=Acme`, { headers: { accept: BROWSER_ACCEPT } });
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toBe(`/admin/sign-in?next=${encodeURIComponent(`${PAGE}?partner=Acme`)}`);

    const token = await createAdminToken(h, "ops");
    const cookie = await signedInCookie(h, token);
    const { status, html, headers } = await pageAs(h, PAGE, cookie);
    expect(status).toBe(200);
    expect(headers.get("cache-control")).toContain("no-store");
    expect(currentNavOf(html)).toBe(PAGE);
    expect(html).toContain("As of ");
    expect(html).toContain("all times UTC.");
    expect(textById(html, "dead-count")).toBe("2 dead letters.");
    const row = tableOf(html, "dead-rows").find((r) => r.id === `delivery-${g}`)!.cells;
    expect(row).toMatchObject({ Partner: "Globex (live)", Attempts: "2", "Last answer": "receiver answered HTTP 500" });
    expect(row.Event).toMatch(/^webhook\.test evt_[0-9a-f]{24}$/);
    expect(row["Dead since"]).toStartWith(h.clock.now().toISOString().slice(0, 10));
    // Newest first; every cell labelled for the narrow layout.
    expect(listed(html)).toEqual([`delivery-${g}`, `delivery-${a}`]);
    const table = /<table class="data" id="dead-rows">[\s\S]*?<\/table>/.exec(html)![0];
    expect((table.match(/<td(?![^>]*data-label)/g) ?? []).length).toBe(0);

    // The GET filter form: by partner, by event type; a filter is kept in each replay form; what it echoes is escaped.
    const acmeOnly = (await pageAs(h, `${PAGE}?partner=Acme`, cookie)).html;
    expect(listed(acmeOnly)).toEqual([`delivery-${a}`]);
    expect(formOf(acmeOnly, `${PAGE}/${a}/replay`)).toMatchObject({ partner: "Acme" });
    expect(hrefOf(acmeOnly, "Every dead letter")).toBe(PAGE);
    expect((await pageAs(h, `${PAGE}?event_type=salutes.credit`, cookie)).html).toContain("None match this filter.");
    const evil = await pageAs(h, `${PAGE}?partner=${encodeURIComponent('"><script>alert(1)</script>')}&event_type=%3Cb%3E`, cookie);
    expect(evil.status).toBe(200);
    expect(evil.html).not.toContain("<script>alert(1)");
    expect(evil.html).not.toContain("<b>");
    expect(evil.html).toContain("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    // A filter past its bound: the page with every dead letter and the refusal above the form (400).
    const long = await pageAs(h, `${PAGE}?partner=${"x".repeat(65)}`, cookie);
    expect(long.status).toBe(400);
    expect(errorLineOf(long.html)).toContain("a filter is at most 64");
    expect(listed(long.html)).toContain(`delivery-${a}`);
    // The same from a script (no text/html in Accept): the JSON envelope the page's OpenAPI entry names.
    const longJson = await h.request(`${PAGE}?event_type=${"y".repeat(70)}`, { headers: { cookie } });
    expect(longJson.status).toBe(400);
    expect(longJson.headers.get("content-type")).toContain("application/json");
    expect(await longJson.json()).toMatchObject({
      success: false,
      error: "invalid_query",
      details: [{ field: "query.event_type", problem: "is 70 characters long; at most 64" }],
    });

    // The bearer token opens it too (no session: no CSRF field in the forms).
    const bearer = await h.request(PAGE, { headers: { authorization: `Bearer ${token}` } });
    expect(bearer.status).toBe(200);
    const bearerHtml = await bearer.text();
    expect(listed(bearerHtml)).toContain(`delivery-${a}`);
    expect(bearerHtml).not.toContain('name="csrf_token"');
    expect((await h.request(PAGE, { headers: { authorization: "Bearer nope" } })).status).toBe(403);

    // Every export link answers with the session cookie; the exports carry the rows and honour the filter.
    const links = exportLinksOf(acmeOnly);
    expect(links).toContain(`${PAGE}.json?partner=Acme`);
    expect(links).toContain(`${PAGE}.csv?partner=Acme`);
    for (const link of links) expect({ link, status: (await h.request(link, { headers: { cookie } })).status }).toEqual({ link, status: 200 });
    const json = await h.json(`${PAGE}.json?partner=Acme`, { headers: { cookie } });
    expect(json.body).toMatchObject({ success: true, total: 1, count: 1, query: { partner: "Acme", event_type: null, limit: 50, offset: 0 } });
    expect(json.body.dead_letters[0]).toMatchObject({
      delivery_id: a,
      partner: "Acme",
      mode: "live",
      event_type: "webhook.test",
      attempts: 2,
      last_status_code: 500,
    });
    const paged = await h.json(`${PAGE}.json?limit=1`, { headers: { authorization: `Bearer ${token}` } });
    expect(paged.body).toMatchObject({ total: 2, count: 1, pagination: { has_more: true, next_offset: 1 } });
    const csv = await h.request(`${PAGE}.csv`, { headers: { cookie } });
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toBe(
      "delivery_id,partner,mode,event_id,event_type,webhook_id,attempts,last_status_code,last_error,reason_tag,target_url,created_at,dead_since",
    );
    expect(lines).toHaveLength(3);
    expect((await h.request(`${PAGE}.json`)).status).toBe(403);
  });

  test("pages of 50, newest first, with Older and Newer links that keep the filter", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 500 });
    const acme = await createKey(h, { partner: "Acme" });
    const hook = await hookFor(acme);
    const ids: number[] = [];
    for (let i = 0; i < 52; i++) ids.push(await testDelivery(acme, hook));
    await attemptAll();
    const cookie = await signedInCookie(h, await createAdminToken(h));
    const first = (await pageAs(h, `${PAGE}?partner=Acme`, cookie)).html;
    expect(textById(first, "dead-count")).toBe("52 dead letters match this filter; 1–50 shown.");
    expect(listed(first)).toEqual(
      ids
        .slice(2)
        .reverse()
        .map((id) => `delivery-${id}`),
    );
    expect(hrefOf(first, "Older →")).toBe(`${PAGE}?partner=Acme&offset=50`);
    expect(hrefOf(first, "← Newer")).toBeNull();
    const second = (await pageAs(h, `${PAGE}?partner=Acme&offset=50`, cookie)).html;
    expect(textById(second, "dead-count")).toBe("52 dead letters match this filter; 51–52 shown.");
    expect(listed(second)).toEqual([`delivery-${ids[1]}`, `delivery-${ids[0]}`]);
    expect(hrefOf(second, "← Newer")).toBe(`${PAGE}?partner=Acme`);
    expect(hrefOf(second, "Older →")).toBeNull();
    const past = (await pageAs(h, `${PAGE}?partner=Acme&offset=100`, cookie)).html;
    expect(textById(past, "dead-count")).toBe("52 dead letters match this filter; none on this page.");
    expect(hrefOf(past, "← Newer")).toBe(`${PAGE}?partner=Acme&offset=50`);
    expect((await h.request(`${PAGE}?offset=-1`, { headers: { cookie } })).status).toBe(400);
  }, 30_000);

  test("a delivery given up on before WEBHOOK_MAX_ATTEMPTS (410 Gone at its first of 3): the page claims no attempts it did not make", async () => {
    h = await openTestApp({ env: { ...ENV, WEBHOOK_MAX_ATTEMPTS: "3" } });
    rx = startReceiver({ status: 410 });
    const acme = await createKey(h, { partner: "Acme" });
    const id = await testDelivery(acme, await hookFor(acme));
    await h.ctx.dispatcher.runOnce();
    expect(await statusOf(id)).toBe("dead_letter");
    const { html } = await pageAs(h, PAGE, await signedInCookie(h, await createAdminToken(h)));
    expect(html).not.toContain("used up");
    expect(html).toContain(
      "that Herald stopped retrying, newest first: after their last attempt failed (WEBHOOK_MAX_ATTEMPTS is 3 now), or sooner when the receiver answered 410 Gone. The Attempts column says how many each had.",
    );
    expect(listed(html)).toEqual([`delivery-${id}`]);
    expect(tableOf(html, "dead-rows")[0]!.cells).toMatchObject({ Delivery: `#${id}`, Attempts: "1" });
  });
});

describe("POST /admin/console/dead-letters/:event_id/replay", () => {
  test("a reason and the CSRF token required; replays a dead letter (audited, in its history), refuses the rest; delivered after", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 500 });
    const acme = await createKey(h, { partner: "Acme" });
    const hook = await hookFor(acme);
    const id = await testDelivery(acme, hook);
    const other = await testDelivery(acme, hook);
    await attemptAll();
    rx.then({ status: 204 });
    const delivered = await testDelivery(acme, hook);
    await h.ctx.dispatcher.runOnce();
    expect([await statusOf(id), await statusOf(other), await statusOf(delivered)]).toEqual(["dead_letter", "dead_letter", "succeeded"]);

    const token = await createAdminToken(h, "ops");
    const cookie = await signedInCookie(h, token);
    const html = (await pageAs(h, PAGE, cookie)).html;
    const csrf = csrfOf(html);
    const url = `${PAGE}/${id}/replay`;
    expect(formOf(html, url)).toEqual({ csrf_token: csrf, reason: "" });

    // Refused before anything changes: no credentials, no token, a wrong token.
    const anon = await h.request(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: BROWSER_ACCEPT },
      body: new URLSearchParams({ reason: "x" }).toString(),
    });
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toBe("/admin/sign-in");
    expect((await formPost(h, url, cookie, { reason: "receiver fixed" })).status).toBe(403);
    expect((await formPost(h, url, cookie, { reason: "receiver fixed", csrf_token: `${csrf}x` })).status).toBe(403);
    expect([await statusOf(id), await replays(), (await audits()).length]).toEqual(["dead_letter", 0, 0]);

    // Refusals a person can act on: the page again with the message and the status.
    const noReason = await formPost(h, url, cookie, { reason: "   ", csrf_token: csrf, partner: "Acme" });
    expect(noReason.status).toBe(400);
    const noReasonHtml = await noReason.text();
    expect(errorLineOf(noReasonHtml)).toStartWith("Nothing was replayed: say why");
    expect(listed(noReasonHtml)).toContain(`delivery-${id}`);
    expect(formOf(noReasonHtml, PAGE)).toMatchObject({ partner: "Acme" });
    for (const [ref, code, text] of [
      ["999999", 404, "there is no delivery #999999"],
      ["evt_000000000000000000000000", 404, "there is no event evt_000000000000000000000000"],
      ["not-an-id", 404, "there is no event not-an-id"],
      [String(delivered), 409, `delivery #${delivered} is not a dead letter (it is succeeded)`],
    ] as const) {
      const res = await formPost(h, `${PAGE}/${ref}/replay`, cookie, { reason: "try", csrf_token: csrf });
      expect({ ref, status: res.status }).toEqual({ ref, status: code });
      expect(await res.text()).toContain(text);
    }
    // A script (no text/html in Accept) gets the JSON envelope instead.
    const script = await formPost(h, `${PAGE}/${delivered}/replay`, cookie, { reason: "try", csrf_token: csrf }, null);
    expect(script.status).toBe(409);
    expect(((await script.json()) as { error: string }).error).toBe("conflict");
    expect([await statusOf(id), await statusOf(delivered), await replays(), (await audits()).length]).toEqual(["dead_letter", "succeeded", 0, 0]);

    // The replay: 303 back (filter kept) with "replayed" on the page; the receiver is back, so it is delivered.
    rx.then({ status: 204 });
    const done = await formPost(h, url, cookie, { reason: "receiver fixed <ticket 42>", csrf_token: csrf, partner: "Acme" });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`${PAGE}?partner=Acme&done=replayed&ref=${id}`);
    await h.ctx.dispatcher.runOnce(); // the pass the replay started (or one more): its outcome recorded
    expect(await statusOf(id)).toBe("succeeded");
    const after = (await pageAs(h, done.headers.get("location")!, cookie)).html;
    expect(after).toContain(`Replayed delivery #${id}: queued again now with its attempts reset`);
    expect(listed(after)).toEqual([`delivery-${other}`]);
    // Through the partner's JSON API: the replay and its reason in the delivery's history.
    const events = await signedJson(h, acme, "GET", "/api/partner/webhook-events?reason_tag=operator_replay");
    expect(events.body.events).toHaveLength(1);
    expect(events.body.events[0]).toMatchObject({ id, status: "succeeded", replays: [{ reason_tag: "operator_replay", note: "receiver fixed <ticket 42>" }] });
    // Audited as the JSON route audits it, by this operator, with the reason.
    const [audit] = await audits();
    expect(audit!.actor).toMatch(/^admin:ops#\d+$/);
    expect(audit!.target).toBe(String(id));
    expect(JSON.parse(audit!.details)).toMatchObject({ ref: String(id), note: "receiver fixed <ticket 42>", via: "console", results: [{ replayed: true }] });

    // Submitted twice: the second finds no dead letter.
    const again = await formPost(h, url, cookie, { reason: "again", csrf_token: csrf });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain(`delivery #${id} is not a dead letter (it is succeeded)`);
    expect(await audits()).toHaveLength(1);

    // By event id, with the bearer token (no CSRF): that event's dead letters.
    const evt = (await h.ctx.store.get<{ public_id: string }>(
      "SELECT e.public_id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = ?",
      [other],
    ))!.public_id;
    rx.then({ status: 204 });
    const byEvent = await h.request(`${PAGE}/${evt}/replay`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ reason: "batch after the outage" }).toString(),
    });
    expect(byEvent.status).toBe(303);
    expect(byEvent.headers.get("location")).toBe(`${PAGE}?done=replayed&ref=${evt}`);
    await h.ctx.dispatcher.runOnce();
    expect(await statusOf(other)).toBe("succeeded");
    expect((await audits()).map((a) => JSON.parse(a.details).note)).toEqual(["receiver fixed <ticket 42>", "batch after the outage"]);
    expect(rx.received.filter((r) => r.method === "POST")).toHaveLength(2 * 2 + 1 + 2); // two dead twice, one delivered, two replays
    expect((await pageAs(h, PAGE, cookie)).html).toContain("None: no delivery was given up on.");
  });

  test("a dead letter whose webhook was deleted is refused (409), nothing changed", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 500 });
    const acme = await createKey(h, { partner: "Acme" });
    const hook = await hookFor(acme);
    const id = await testDelivery(acme, hook);
    await attemptAll();
    expect((await signedJson(h, acme, "DELETE", `/api/partner/webhooks/${hook}`)).status).toBe(200);
    const cookie = await signedInCookie(h, await createAdminToken(h));
    const csrf = csrfOf((await pageAs(h, PAGE, cookie)).html);
    const res = await formPost(h, `${PAGE}/${id}/replay`, cookie, { reason: "try", csrf_token: csrf });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("its webhook was deleted");
    expect([await statusOf(id), await replays(), (await audits()).length]).toEqual(["dead_letter", 0, 0]);
  });
});

describe("the dead letters with the operator token alone (no console session)", () => {
  test("page, exports and an audited replay with a reason; a replay that is not of a dead letter changes nothing", async () => {
    h = await openTestApp({ env: ENV });
    rx = startReceiver({ status: 500 });
    const acme = await createKey(h, { partner: "Acme" });
    const hook = await hookFor(acme);
    const [a, b] = [await testDelivery(acme, hook), await testDelivery(acme, hook)];
    await attemptAll();
    const bearer = { authorization: `Bearer ${await createAdminToken(h, "ops")}` };

    const page = await h.request(PAGE, { headers: bearer });
    expect(page.status).toBe(200);
    expect(textById(await page.text(), "dead-count")).toBe("2 dead letters.");
    const json = await h.json(`${PAGE}.json?partner=Acme&limit=1`, { headers: bearer });
    expect(json.body).toMatchObject({ total: 2, count: 1, dead_letters: [{ delivery_id: b, attempts: 2 }], pagination: { has_more: true } });

    rx.then({ status: 204 });
    const form = (reason: string) => ({
      method: "POST",
      headers: { ...bearer, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ reason }).toString(),
    });
    expect((await h.request(`${PAGE}/${a}/replay`, form("receiver back"))).status).toBe(303);
    await h.ctx.dispatcher.runOnce();
    expect([await statusOf(a), await statusOf(b)]).toEqual(["succeeded", "dead_letter"]);
    const again = await h.json(`${PAGE}/${a}/replay`, form("once more"));
    expect([again.status, again.body.error]).toEqual([409, "conflict"]);
    expect(await replays()).toBe(1);
    const [audit] = await audits();
    expect(audit).toMatchObject({ actor: expect.stringContaining("admin:ops"), target: String(a) });
    expect(JSON.parse(audit!.details)).toMatchObject({ note: "receiver back", via: "console" });
  });
});
