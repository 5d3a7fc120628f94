import { expect, test } from "bun:test";
import { recordAlertRun } from "../../src/ops/alerts/service";
import { servedForBrowser } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { noHorizontalOverflow, signIn } from "../support/browser";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";

// The alerts page in real headless Chromium (JavaScript off), as an operator on call uses it: sign in through the
// form, open Alerts from the header, follow a firing alert to its page and come back by its back-link, read it
// at 1280 px and 390 px without horizontal scrolling, silence the alert until a time with the form, see who, why
// and until when, end the silence with its button, and meet a refusal as the page with its error. A post without
// the CSRF token, with this browser's own session cookie, is refused. Screenshots: a temp dir, or
// OPS_SCREENSHOT_DIR.

const NOW = "2026-04-01T12:00:00.000Z";
const PAGE = "/admin/console/alerts";

let h: TestApp | undefined;
let token = "";

const { present, browser, base } = servedForBrowser("test/ops/console-alerts.browser.test.ts", async () => {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  token = await createAdminToken(h, "on-call");
  await recordAlertRun(h.ctx, {
    source: "digest",
    alerts: [
      {
        name: "403_spike",
        status: "warn",
        value: 129,
        details: { summary: "route /api/partner/users/:id: 129 403s in 2 consecutive hours against a rolling_24h baseline of 2 <b>(ratio 64.5)</b>" },
      },
    ],
  });
  await recordAlertRun(h.ctx, {
    source: "webhooks",
    alerts: [
      {
        name: "dead_letter_growth",
        status: "fail",
        value: 42,
        details: { summary: "42 dead letters, +40 since the last run: https://partner-eu-west-1.example.com/hooks/herald/deliveries" },
      },
      { name: "delivery_latency", status: "ok", value: 120 },
    ],
  });
  return h;
});

test.skipIf(!present)(
  "sign in, open Alerts from the header, follow an alert and back, silence it until a time, end it; a refusal; readable at 390 px",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base()}${PAGE}`, { waitUntil: "load" });
    expect(new URL(page.url()).pathname).toBe("/admin/sign-in");
    await signIn(page, base(), token);
    await page.click(`#console-nav a[href="${PAGE}"]`);
    expect(page.url()).toBe(`${base()}${PAGE}`);
    expect(await page.locator("main h1").innerText()).toBe("Alerts");
    expect(await page.locator("#console-nav a[aria-current=page]").getAttribute("href")).toBe(PAGE);
    expect(await page.locator("#firing-count").innerText()).toBe("2");
    // fail first, then warn; the summary's markup is text.
    expect(await page.locator("#firing-rows tbody tr").first().innerText()).toContain("webhooks:dead_letter_growth");
    expect(await page.locator("#firing-rows").innerText()).toContain("<b>(ratio 64.5)</b>");
    expect(await page.locator("#history-rows tbody tr").count()).toBe(3);
    expect(await page.locator("#run-rows tbody tr").count()).toBe(3);
    expect(await page.locator("#silence-rows-none").innerText()).toBe("None.");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-alerts-1280.png");

    // The alert's own page, and back.
    await page.click("#firing-rows a:has-text('digest:403_spike')");
    expect(page.url()).toMatch(/\/admin\/ops\/alerts-monitor\/alerts\/\d+$/);
    expect(await page.locator("#alert-key").innerText()).toBe("digest:403_spike");
    await page.click("#back");
    expect(page.url()).toBe(`${base()}${PAGE}`);

    // The evaluations filter (a GET form): only the fail ones.
    await page.selectOption("#runs-form select[name=status]", "fail");
    await page.click("#runs-apply");
    expect(new URL(page.url()).searchParams.get("status")).toBe("fail");
    expect(await page.locator("#run-rows tbody tr").count()).toBe(1);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base()}${PAGE}`, { waitUntil: "load" });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-alerts-390.png");

    // Silence the digest alert until tomorrow morning, from its Silence… link.
    await page.click("#firing-rows tr:has-text('digest:403_spike') a:text('Silence…')");
    expect(await page.locator("input[name=matcher]").inputValue()).toBe("digest:403_spike");
    await page.fill("input[name=reason]", "Known scanner, blocked at the edge (ticket OPS-12)");
    await page.fill("input[name=until]", "2026-04-02T09:30");
    await page.click("#silence");
    expect(page.url()).toMatch(/\/admin\/console\/alerts\?done=silenced&silence=\d+$/);
    const id = new URL(page.url()).searchParams.get("silence")!;
    expect(await page.locator("#done").innerText()).toBe(`Silence #${id} added.`);
    const row = await page.locator(`#silence-rows #silence-${id}`).innerText();
    expect(row).toContain("Known scanner, blocked at the edge (ticket OPS-12)");
    expect(row).toContain("admin:on-call");
    expect(row).toContain("2026-04-02 09:30:00 UTC");
    expect(await page.locator("#firing-rows").innerText()).toContain(`#${id} by admin:on-call`);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-alerts-silenced-390.png");

    // A refusal: a matcher with spaces comes back as the page with the error, the typed reason kept.
    await page.fill("input[name=matcher]", "not a key");
    await page.fill("input[name=reason]", "typo");
    const [refused] = await Promise.all([page.waitForEvent("response", (r) => r.request().method() === "POST"), page.click("#silence")]);
    expect(refused.status()).toBe(400);
    expect(await page.locator("#form-error").innerText()).toContain("without spaces");
    expect(await page.locator("input[name=reason]").inputValue()).toBe("typo");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-alerts-refused-390.png");

    // The form without its csrf_token, with this browser's session cookie: refused, the silence still active.
    const session = (await browser.context!.cookies()).find((c) => c.name === "herald_admin_session")!;
    const forged = await fetch(`${base()}${PAGE}/silences/${id}/end`, {
      method: "POST",
      headers: { cookie: `herald_admin_session=${session.value}`, "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
      body: "",
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    const active = await h!.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM ops_alert_silences WHERE expired_at IS NULL");
    expect(active!.n).toBe(1);

    // End it with its button.
    await page.goto(`${base()}${PAGE}`, { waitUntil: "load" });
    await page.click(`#end-${id}`);
    expect(await page.locator("#done").innerText()).toBe(`Silence #${id} ended now.`);
    expect(await page.locator("#silence-rows-none").innerText()).toBe("None.");
    expect(await page.locator(`#ended-rows #silence-${id}`).innerText()).toContain("ended 2026-04-01 12:00:00 UTC by admin:on-call");
    await page.setViewportSize({ width: 1280, height: 900 });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-alerts-ended-1280.png");
  },
  120_000,
);
