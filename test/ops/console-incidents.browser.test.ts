import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { servedForBrowser } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { noHorizontalOverflow, signIn } from "../support/browser";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { operator } from "../status/support";

// The incidents page in real headless Chromium (JavaScript off), as an operator writing the report uses it: sign
// in through the form, open Incidents from the header, follow the open incident to its page and come back by its
// back-link, choose the draft's window and template with the GET form, find the text area holding exactly what
// draft.md serves (fetched with this browser's session cookie), download draft.md by its link, and meet a refused
// parameter as the page with the error. Read at 1280 px and 390 px without horizontal scrolling. The page has no
// POST form (incidents are opened and updated through /admin/status/incidents), so there is no CSRF case here.
// Screenshots: a temp dir, or OPS_SCREENSHOT_DIR.

const PAGE = "/admin/console/incidents";

let h: TestApp | undefined;
let token = "";
let openId = 0;

const { present, browser, base } = servedForBrowser("test/ops/console-incidents.browser.test.ts", async () => {
  h = await openTestApp({ clock: new FakeClock("2026-04-01T09:00:00.000Z") });
  token = await createAdminToken(h, "on-call");
  const admin = operator(h, token);
  const old = await admin.post("/admin/status/incidents", {
    title: "Partner API answered 503 for EU partners",
    message: "Errors.",
    severity: "bad",
    components: ["api"],
  });
  h.clock.advance(25 * 60_000);
  await admin.post(`/admin/status/incidents/${old.body.incident.id}/updates`, { state: "resolved", message: "A bad deploy, rolled back." });
  h.clock.advance(2 * 3_600_000);
  const open = await admin.post("/admin/status/incidents", {
    title: "Webhook deliveries delayed for partners in the EU region <eu-1> & retries piling up",
    message: "Deliveries are queued; https://partner-eu-west-1.example.com/hooks/herald/deliveries answers in 30 s.",
    severity: "warn",
    components: ["webhooks"],
  });
  openId = open.body.incident.id;
  h.clock.advance(10 * 60_000);
  return h;
});

test.skipIf(!present)(
  "sign in, open Incidents from the header, follow one and back, choose the draft, copy it or download draft.md; readable at 390 px",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base()}${PAGE}`, { waitUntil: "load" });
    expect(new URL(page.url()).pathname).toBe("/admin/sign-in");
    await signIn(page, base(), token);
    await page.click(`#console-nav a[href="${PAGE}"]`);
    expect(page.url()).toBe(`${base()}${PAGE}`);
    expect(await page.locator("main h1").innerText()).toBe("Incidents");
    expect(await page.locator("#console-nav a[aria-current=page]").getAttribute("href")).toBe(PAGE);
    expect(await page.locator("#open-count").innerText()).toBe("1");
    expect(await page.locator("#open-rows").innerText()).toContain("<eu-1> & retries piling up");
    expect(await page.locator("#recent-rows tbody tr").count()).toBe(1);
    expect(await page.locator("#draft").inputValue()).toContain("# Incident report: Webhook deliveries delayed");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-incidents-1280.png");

    // The open incident's page, and back.
    await page.click(`#incident-${openId} a`);
    expect(page.url()).toBe(`${base()}/admin/ops/incidents/${openId}`);
    expect(await page.locator("#incident-state").innerText()).toBe("open: warn");
    await page.click("#back");
    expect(page.url()).toBe(`${base()}${PAGE}`);

    // The draft of the older, resolved incident over the last 6 hours, minimal template.
    await page.fill("#draft-form input[name=hours]", "6");
    await page.fill("#draft-form input[name=index]", "1");
    await page.selectOption("#draft-form select[name=template]", "minimal");
    await page.click("#draft-apply");
    const url = new URL(page.url());
    expect([url.searchParams.get("hours"), url.searchParams.get("index"), url.searchParams.get("template")]).toEqual(["6", "1", "minimal"]);
    const draft = await page.locator("#draft").inputValue();
    expect(draft).toContain("# Incident report: Partner API answered 503 for EU partners");
    expect(await page.locator("#draft").getAttribute("readonly")).not.toBeNull();

    // draft.md of the same parameters, with this browser's session cookie, is the same text; so is the download.
    const href = (await page.locator("#draft-md").getAttribute("href"))!;
    expect(href).toBe("/admin/ops/incidents/draft.md?hours=6&index=1&template=minimal");
    const served = await browser.context!.request.get(`${base()}${href}`);
    expect(served.status()).toBe(200);
    expect(await served.text()).toBe(draft);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#draft-md")]);
    expect(download.suggestedFilename()).toBe("incident-draft.md");
    expect(readFileSync((await download.path())!, "utf8")).toBe(draft);

    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-incidents-draft-390.png");

    // No incident at index 5 of a 1-hour window: the page says so (404), the list still there.
    await page.fill("#draft-form input[name=hours]", "1");
    await page.fill("#draft-form input[name=index]", "5");
    const [refused] = await Promise.all([page.waitForEvent("response", (r) => new URL(r.url()).pathname === PAGE), page.click("#draft-apply")]);
    expect(refused.status()).toBe(404);
    expect(await page.locator("#form-error").innerText()).toContain("No incident at index 5");
    expect(await page.locator("#draft").count()).toBe(0);
    expect(await page.locator("#open-count").innerText()).toBe("1");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-incidents-refused-390.png");
  },
  120_000,
);
