import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { linkInboxSender } from "../../src/ops/link-inbox/outbox";
import { openTestApp, type TestApp } from "../support/app";
import { chromiumPresent, noHorizontalOverflow, OperatorBrowser } from "../support/browser";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";
import { operator } from "../status/support";
import { plantAlertRun } from "./support";

// The pages a chat notice links to, in real headless Chromium (JavaScript off), as a person on call meets them:
// the link from the message a real chat receiver got opens the sign-in form, which comes back to the incident;
// the alert's link then opens with the session. Both read at 1280 px and 390 px without horizontal scrolling.
// Skipped only when /usr/bin/chromium is absent (CI installs it). Screenshots: a temp dir, or OPS_SCREENSHOT_DIR.

const present = chromiumPresent("test/ops/alert-pages.browser.test.ts");
const NOW = "2026-04-01T12:00:00.000Z";

let h: TestApp | undefined;
let rx: Receiver | undefined;
let server: ReturnType<TestApp["app"]["listen"]> | undefined;
const browser = new OperatorBrowser();
let token = "";
let incidentPath = "";
let alertPath = "";
const base = () => `http://127.0.0.1:${server!.server!.port}`;

/** The Herald path a chat message links to (its last word), to open on this test's server. */
const pathOf = (text: string) => new URL(text.split(" ").pop()!).pathname;

beforeAll(async () => {
  if (!present) return;
  rx = startReceiver({ status: 200 });
  h = await openTestApp({ clock: new FakeClock(NOW), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", LINK_INBOX_WEBHOOK_URLS: rx.url("/chat") } });
  token = await createAdminToken(h, "on-call");
  server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  const admin = operator(h, token);
  const created = await admin.post("/admin/status/incidents", {
    title: "Webhook deliveries delayed for partners in the EU region <eu-1>",
    message: "Deliveries are queued; a receiver is slow.",
    severity: "bad",
    components: ["webhooks"],
  });
  h.clock.advance(5 * 60_000);
  await admin.post(`/admin/status/incidents/${created.body.incident.id}/updates`, { state: "identified", message: "One partner's receiver answers in 30 s." });
  await plantAlertRun(h.ctx.store, {
    runId: "ar_00aa",
    at: h.clock.now().toISOString(),
    source: "digest",
    name: "403_spike",
    status: "warn",
    value: "129",
    details: JSON.stringify({
      summary:
        "route /api/partner/users/:id: 129 403s in 2 consecutive hours (2026-04-01T10 to 2026-04-01T11) against a rolling_24h baseline of 2 (ratio 64.5)",
      findings_total: 1,
    }),
  });
  await linkInboxSender(h.ctx).runOnce();
  const texts = rx.received.map((r) => JSON.parse(r.rawBody).text as string);
  incidentPath = pathOf(texts.find((t) => t.includes("Incident opened"))!);
  alertPath = pathOf(texts.find((t) => t.includes("digest/403_spike"))!);
  await browser.launch();
}, 120_000);

afterAll(async () => {
  await browser.close();
  await server?.stop(true);
  await h?.close();
  rx?.stop();
});

const text = (page: Page, selector: string) => page.locator(selector).innerText();

test.skipIf(!present)(
  "the incident and alert links of the chat messages open their pages for a signed-in browser, readable at 1280 and 390 px",
  async () => {
    expect(incidentPath).toMatch(/^\/admin\/ops\/incidents\/\d+$/);
    expect(alertPath).toMatch(/^\/admin\/ops\/alerts-monitor\/alerts\/\d+$/);
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.goto(`${base()}${incidentPath}`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/sign-in?next=${encodeURIComponent(incidentPath)}`);
    await page.fill("#token", token);
    await page.click("#sign-in");
    expect(page.url()).toBe(`${base()}${incidentPath}`);
    expect(await page.title()).toBe("Incident · Herald");
    expect(await text(page, "main h1")).toMatch(/^Incident #\d+: Webhook deliveries delayed for partners in the EU region <eu-1>$/);
    expect(await text(page, "#incident-state")).toBe("open: bad");
    expect(await page.locator("#update-rows tbody tr").count()).toBe(2);
    expect(await text(page, "#update-rows tbody tr:first-child")).toContain("One partner's receiver answers in 30 s.");
    expect(await text(page, "#notice-rows")).toContain("incident.opened");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "incident-1280.png");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload({ waitUntil: "load" });
    await noHorizontalOverflow(page);
    expect(await page.locator("#incident-state").isVisible()).toBe(true);
    await browser.screenshot(page, "incident-390.png");

    // The alert's link, with the same session.
    await page.goto(`${base()}${alertPath}`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}${alertPath}`);
    expect(await page.title()).toBe("Alert · Herald");
    expect(await text(page, "#alert-key")).toBe("digest:403_spike");
    expect(await text(page, "#alert-state")).toBe("firing: warn");
    expect(await text(page, "#fact-value")).toBe("129");
    expect(await text(page, "#fact-summary")).toContain("ratio 64.5");
    expect(await text(page, "#details")).toContain('"findings_total": 1');
    expect(await text(page, "#history-rows")).toContain("ar_00aa");
    expect(await text(page, "#notice-rows")).toContain("alert.fired");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "alert-390.png");
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.reload({ waitUntil: "load" });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "alert-1280.png");

    // Its notices link opens the link inbox filtered to this alert.
    await page.click("#notices-all");
    expect(page.url()).toBe(`${base()}/admin/ops/link-inbox?issue_id=${encodeURIComponent("alert:digest:403_spike")}`);
    expect(await page.title()).toBe("Link inbox · Herald");
  },
  120_000,
);
