import { expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { servedForBrowser } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { noHorizontalOverflow } from "../support/browser";
import { createAdminToken } from "../support/partner";
import { testEngine } from "../support/engine";

// Operator sign-in and the config page in real headless Chromium (Debian's /usr/bin/chromium driven by
// playwright-core, as test/status/page.browser.test.ts), from a real server on 127.0.0.1 with JavaScript off:
// sign in through the form, see the page at 1280 px and 390 px, sign out, and the page then sends the browser
// back to the sign-in form. Skipped only when /usr/bin/chromium is absent (CI installs it: .ci/run).
// Screenshots go to a temp dir, or to OPS_SCREENSHOT_DIR when set (a person should look at them).

const SECRET = "z".repeat(48);

let h: TestApp | undefined;
let token = "";

const { present, browser, base } = servedForBrowser("test/console/config-page.browser.test.ts", async () => {
  h = await openTestApp({ env: { ADMIN_TOKEN: SECRET, WEBHOOK_MAX_ATTEMPTS: "7", LOG_LEVEL: "silent" } });
  token = await createAdminToken(h, "browser-operator");
  return h;
});

const screenshot = (page: Page, name: string) => browser.screenshot(page, name);

test.skipIf(!present)(
  "sign in through the form, see the config page at 1280 and 390 px, sign out, and the page refuses",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });

    // Not signed in: the page sends the browser to the form, remembering where it was going.
    await page.goto(`${base()}/admin/ops/config`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/sign-in?next=%2Fadmin%2Fops%2Fconfig`);
    await screenshot(page, "sign-in-1280.png");

    // A wrong token: the form again, with the reason.
    await page.fill("#token", "hat_not-a-real-token-not-a-real-token");
    await page.click("#sign-in");
    expect(await page.locator("#sign-in-error").innerText()).toBe("That is not a valid admin token");

    await page.fill("#token", token);
    await page.click("#sign-in");
    expect(page.url()).toBe(`${base()}/admin/ops/config`);
    expect(await page.title()).toBe("Configuration · Herald");
    const cookies = await browser.context!.cookies(`${base()}/admin/ops/config`);
    const session = cookies.find((c) => c.name === "herald_admin_session")!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/admin", secure: false });

    const html = await page.content();
    expect(html).not.toContain(SECRET);
    // DATABASE_URL is a secret too (it may carry a password): on PostgreSQL the page never shows it.
    if (testEngine() === "postgres") expect(html).not.toContain(h!.ctx.config.database.url!);
    expect(await page.locator("#var-ADMIN_TOKEN").innerText()).toContain("****");
    expect(await page.locator("#var-WEBHOOK_MAX_ATTEMPTS").getAttribute("class")).toBe("changed");
    // NODE_ENV, HERALD_DB_PATH, LOG_LEVEL and JOBS_ENABLED (set by the test app) and the two above; on PostgreSQL
    // also DATABASE_URL and DATABASE_POOL_MAX.
    expect(await page.locator("#changed-count").innerText()).toBe(testEngine() === "postgres" ? "8" : "6");
    await noHorizontalOverflow(page);
    await screenshot(page, "config-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload({ waitUntil: "load" });
    await noHorizontalOverflow(page);
    expect(await page.locator("#sign-out").isVisible()).toBe(true);
    await screenshot(page, "config-390.png");

    // Sign out: the form posts the session's CSRF token; the session ends and the page refuses.
    await page.click("#sign-out");
    expect(page.url()).toBe(`${base()}/admin/sign-in`);
    await page.goto(`${base()}/admin/ops/config`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/sign-in?next=%2Fadmin%2Fops%2Fconfig`);
    await screenshot(page, "sign-in-390.png");
    const row = await h!.ctx.store.get<{ revoked_at: string | null }>("SELECT revoked_at FROM admin_sessions");
    expect(row!.revoked_at).not.toBeNull();
  },
  120_000,
);
