import { afterAll, beforeAll, expect, test } from "bun:test";
import { HOME_LINKS } from "../../src/system/home";
import { createTestApp, type TestApp } from "../support/app";
import { chromiumPresent, noHorizontalOverflow, OperatorBrowser } from "../support/browser";
import { createAdminToken } from "../support/partner";

// The addresses a person types, in real headless Chromium (JavaScript off, as test/support/browser.ts drives the
// console) against a served Herald on 127.0.0.1: `/` shows its four main links, each visible and opening its page;
// the console's link and `/admin` land on the sign-in form, and signing in there opens the console. Nothing on the
// way is refused by a page's Content-Security-Policy (Chromium reports a refusal on the console) and no request
// leaves 127.0.0.1. Screenshots at 390 px and 1280 px go to OPS_SCREENSHOT_DIR (or a temp dir).

const present = chromiumPresent("test/http/home.browser.test.ts");

let h: TestApp | undefined;
let server: ReturnType<TestApp["app"]["listen"]> | undefined;
const browser = new OperatorBrowser();
const refused: string[] = [];
const outside: string[] = [];
let token = "";
const base = () => `http://127.0.0.1:${server!.server!.port}`;
const SIGN_IN = `/admin/sign-in?next=${encodeURIComponent("/admin/console")}`;

beforeAll(async () => {
  if (!present) return;
  h = createTestApp();
  token = await createAdminToken(h, "front-door");
  server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  const context = await browser.launch();
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === "127.0.0.1" || url.protocol === "data:") return route.continue();
    outside.push(url.href);
    return route.abort();
  });
  context.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) refused.push(m.text());
  });
}, 120_000);

afterAll(async () => {
  await browser.close();
  await server?.stop(true);
  await h?.close();
});

const MAIN = [HOME_LINKS.status_page, HOME_LINKS.api_reference, HOME_LINKS.developer_portal, HOME_LINKS.console];

test.skipIf(!present)(
  "/ shows the four main links, visible and readable at 390 px; each opens its page, the console's the sign-in form",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 390, height: 844 });
    const home = await page.goto(`${base()}/`, { waitUntil: "load" });
    expect([home!.status(), home!.headers()["content-type"]]).toEqual([200, "text/html; charset=utf-8"]);
    expect(await page.title()).toBe("Herald");
    expect(await page.locator("h1").innerText()).toBe("Herald");
    const main = page.locator("#links a");
    expect(await main.count()).toBe(4);
    for (const [i, link] of MAIN.entries()) {
      const a = main.nth(i);
      expect(await a.isVisible()).toBe(true);
      expect([await a.innerText(), await a.getAttribute("href")]).toEqual([link.title, link.href]);
    }
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "home-390.png");
    await page.setViewportSize({ width: 1280, height: 900 });
    await browser.screenshot(page, "home-1280.png");

    // Followed as a person does: click, the page opens (200), back to the front door.
    for (const link of [HOME_LINKS.status_page, HOME_LINKS.api_reference, HOME_LINKS.developer_portal]) {
      const [response] = await Promise.all([
        page.waitForEvent("response", (r) => new URL(r.url()).pathname === link.href),
        page.click(`#links a[href="${link.href}"]`),
      ]);
      expect([link.href, response.status()]).toEqual([link.href, 200]);
      expect(new URL(page.url()).pathname).toBe(link.href);
      await page.goto(`${base()}/`, { waitUntil: "load" });
    }
    await page.click(`#links a[href="${HOME_LINKS.console.href}"]`);
    expect(page.url()).toBe(`${base()}${SIGN_IN}`);
    expect(await page.locator("#token").isVisible()).toBe(true);

    expect(refused).toEqual([]);
    expect(outside).toEqual([]);
  },
  120_000,
);

test.skipIf(!present)(
  "/admin lands on the sign-in form, which opens the console; signed in, /admin goes straight there",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ["/admin", "/admin/"]) {
      await page.goto(`${base()}${path}`, { waitUntil: "load" });
      expect([path, page.url()]).toEqual([path, `${base()}${SIGN_IN}`]);
    }
    await page.fill("#token", token);
    await page.click("#sign-in");
    expect(page.url()).toBe(`${base()}/admin/ops/readiness`);
    expect(await page.locator("#console-nav").isVisible()).toBe(true);
    await page.goto(`${base()}/admin`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/ops/readiness`);
    await browser.screenshot(page, "home-admin-signed-in-390.png");

    expect(refused).toEqual([]);
    expect(outside).toEqual([]);
  },
  120_000,
);
