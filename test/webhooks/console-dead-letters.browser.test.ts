import { afterAll, beforeAll, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { chromiumPresent, noHorizontalOverflow, OperatorBrowser, signIn } from "../support/browser";
import { FakeClock } from "../support/clock";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";

// The dead-letters page in real headless Chromium (JavaScript off), as an operator uses it: sign in through the
// form, open "Webhook dead letters" from the header, read it at 1280 px and 390 px without horizontal scrolling
// (a long target URL, a long error), filter by partner with the GET form, replay one dead letter with a reason
// and see "Replayed" on the page it comes back to. A replay posted without the CSRF token, with the browser's
// own session cookie, is refused and changes nothing. Screenshots: a temp dir, or OPS_SCREENSHOT_DIR.

const present = chromiumPresent("test/webhooks/console-dead-letters.browser.test.ts");
const PAGE = "/admin/console/dead-letters";

let h: TestApp | undefined;
let rx: Receiver | undefined;
let server: ReturnType<TestApp["app"]["listen"]> | undefined;
const browser = new OperatorBrowser();
let token = "";
const ids: Record<string, number> = {};
const base = () => `http://127.0.0.1:${server!.server!.port}`;
const statusOf = async (id: number) => (await h!.ctx.store.get<{ status: string }>("SELECT status FROM webhook_deliveries WHERE id = ?", [id]))!.status;

async function deadLetter(key: TestKey, path: string): Promise<number> {
  const hook = await signedJson(h!, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: rx!.url(path) } });
  const sent = await signedJson(h!, key, "POST", `/api/partner/webhooks/${hook.body.webhook.id}/test`);
  return sent.body.delivery_id as number;
}

beforeAll(async () => {
  if (!present) return;
  h = await openTestApp({
    clock: new FakeClock("2026-04-01T12:00:00.000Z"),
    env: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
      WEBHOOK_TIMEOUT_SECONDS: "1",
      WEBHOOK_MAX_ATTEMPTS: "2",
      WEBHOOK_RETRY_BASE_SECONDS: "60",
      WEBHOOK_RETRY_JITTER_PCT: "0",
    },
  });
  rx = startReceiver({ status: 503 });
  token = await createAdminToken(h, "on-call");
  ids.acme = await deadLetter(await createKey(h, { partner: "Acme Corp." }), "/hooks/herald");
  ids.northwind = await deadLetter(
    await createKey(h, { partner: "Northwind_Traders_International_Holdings_Subsidiary_Europe_Ltd" }),
    `/webhooks/receiver/${"a-very-long-path-segment-without-breaks-".repeat(4)}end?tenant=northwind-europe-production-primary`,
  );
  for (let i = 0; i < 2; i++) {
    await h.ctx.dispatcher.runOnce();
    h.clock.advanceSeconds(600);
  }
  server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  await browser.launch();
}, 120_000);

afterAll(async () => {
  await browser.close();
  await server?.stop(true);
  rx?.stop();
  await h?.close();
});

test.skipIf(!present)(
  "sign in, open Webhook dead letters from the header, filter, replay one with a reason; readable at 390 px",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, base(), token);
    await page.click(`#console-nav a[href="${PAGE}"]`);
    expect(page.url()).toBe(`${base()}${PAGE}`);
    expect(await page.locator("main h1").innerText()).toBe("Webhook dead letters");
    expect(await page.locator(`#console-nav a[aria-current=page]`).innerText()).toBe("Webhook dead letters");
    expect(await page.locator("#dead-count").innerText()).toBe("2 dead letters.");
    expect(await page.locator("#dead-rows tbody tr").count()).toBe(2);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-dead-letters-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-dead-letters-390.png");

    // A filter past its bound, in a browser: the page again, the refusal above its form, every dead letter listed.
    const long = await page.goto(`${base()}${PAGE}?partner=${"x".repeat(70)}`, { waitUntil: "load" });
    expect(long?.status()).toBe(400);
    expect(await page.locator(".error").first().innerText()).toContain("a filter is at most 64");
    expect(await page.locator("#dead-rows tbody tr").count()).toBe(2);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-dead-letters-long-filter-390.png");

    // The GET filter form.
    await page.fill("input[name=partner]", "Acme Corp.");
    await page.click("#apply");
    expect(page.url()).toBe(`${base()}${PAGE}?partner=Acme+Corp.&event_type=`);
    expect(await page.locator("#dead-count").innerText()).toBe("1 dead letter match this filter.");

    // A reason is required: the browser does not send the form without one.
    const row = page.locator(`#delivery-${ids.acme}`);
    await row.locator(`#replay-${ids.acme}`).click();
    expect(page.url()).toBe(`${base()}${PAGE}?partner=Acme+Corp.&event_type=`);
    expect(await statusOf(ids.acme!)).toBe("dead_letter");

    // Replay with a reason: back to the same filter with the result on top; delivered (the receiver is back).
    rx!.then({ status: 204 });
    await row.locator("input[name=reason]").fill("Receiver fixed after the certificate renewal (OPS-12)");
    await row.locator(`#replay-${ids.acme}`).click();
    expect(page.url()).toBe(`${base()}${PAGE}?partner=Acme+Corp.&done=replayed&ref=${ids.acme}`);
    expect(await page.locator("#done").innerText()).toContain(`Replayed delivery #${ids.acme}: queued again now`);
    await h!.ctx.dispatcher.runOnce();
    expect(await statusOf(ids.acme!)).toBe("succeeded");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-dead-letters-replayed-390.png");

    // The replay form without its csrf_token, sent with this browser's session cookie: refused, still dead.
    const session = (await browser.context!.cookies()).find((c) => c.name === "herald_admin_session")!;
    const forged = await fetch(`${base()}${PAGE}/${ids.northwind}/replay`, {
      method: "POST",
      headers: { cookie: `herald_admin_session=${session.value}`, "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
      body: new URLSearchParams({ reason: "forged" }).toString(),
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    expect(await statusOf(ids.northwind!)).toBe("dead_letter");
    const replays = await h!.ctx.store.all("SELECT delivery_id, note FROM webhook_replays");
    expect(replays).toEqual([{ delivery_id: ids.acme!, note: "Receiver fixed after the certificate renewal (OPS-12)" }]);
  },
  120_000,
);
