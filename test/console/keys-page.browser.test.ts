import { afterAll, beforeAll, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { chromiumPresent, noHorizontalOverflow, OperatorBrowser, signIn } from "../support/browser";
import { FakeClock } from "../support/clock";
import { createAdminToken, createKey, type TestKey } from "../support/partner";
import { operator } from "../status/support";

// The partners page in real headless Chromium (JavaScript off), as an operator uses it: sign in through the form,
// open "Partners & keys" from the header, read it at 1280 px and 390 px without horizontal scrolling (a long
// partner name, long key ids, the forms opened), filter by mode with the GET form, disable a key (reason and the
// confirmation box), rotate another and read the secret on its answer page — not in the address bar. A disable
// posted without the CSRF token, with the browser's own session cookie, is refused and changes nothing.
// Screenshots: a temp dir, or OPS_SCREENSHOT_DIR.

const present = chromiumPresent("test/console/keys-page.browser.test.ts");

let h: TestApp | undefined;
let server: ReturnType<TestApp["app"]["listen"]> | undefined;
const browser = new OperatorBrowser();
let token = "";
let acme: TestKey;
let globex: TestKey;
let longName: TestKey;
const base = () => `http://127.0.0.1:${server!.server!.port}`;

beforeAll(async () => {
  if (!present) return;
  h = await openTestApp({ clock: new FakeClock("2026-04-01T12:00:00.000Z") });
  token = await createAdminToken(h, "on-call");
  acme = await createKey(h, { partner: "Acme Corp." });
  globex = await createKey(h, { partner: "Globex", mode: "sandbox", scopes: ["read", "webhooks"] });
  longName = await createKey(h, { partner: "Northwind_Traders_International_Holdings_Subsidiary_Europe_Ltd" });
  server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  await browser.launch();
}, 120_000);

afterAll(async () => {
  await browser.close();
  await server?.stop(true);
  await h?.close();
});

test.skipIf(!present)(
  "sign in, open Partners & keys from the header, filter, disable one key, rotate another; readable at 390 px",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, base(), token);
    await page.click('#console-nav a[href="/admin/console/partners"]');
    expect(page.url()).toBe(`${base()}/admin/console/partners`);
    expect(await page.locator("main h1").innerText()).toBe("Partners & keys");
    expect(await page.locator("#key-count").innerText()).toBe("3 keys (3 active).");
    expect(await page.locator("section.partner h2").allInnerTexts()).toEqual([
      "Acme Corp.",
      "Globex",
      "Northwind_Traders_International_Holdings_Subsidiary_Europe_Ltd",
    ]);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-partners-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    for (const summary of await page.locator("details.act summary").all()) await summary.click();
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-partners-forms-390.png");

    // The GET filter form.
    await page.selectOption("select[name=mode]", "sandbox");
    await page.click("#apply");
    expect(page.url()).toBe(`${base()}/admin/console/partners?partner=&mode=sandbox&status=`);
    expect(await page.locator("#key-count").innerText()).toBe("1 key (1 active).");

    // Disable the sandbox key: a reason and the box.
    const row = page.locator(`#key-${globex.keyId}`);
    await row.locator("summary:text('Disable')").click();
    await row.locator("input[name=reason]").fill("Partner left the pilot");
    await row.locator("input[name=confirm]").check();
    await row.locator(`#disable-${globex.keyId}`).click();
    expect(page.url()).toBe(`${base()}/admin/console/partners?done=disabled&key=${globex.keyId}`);
    expect(await page.locator("#done").innerText()).toContain(`Key ${globex.keyId} disabled`);
    expect(await page.locator(`#key-${globex.keyId} td[data-label=State]`).innerText()).toContain("disabled Partner left the pilot");
    expect(await page.locator(`#rotate-${globex.keyId}`).count()).toBe(0);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-partners-disabled-390.png");

    // Rotate the long-named partner's key: the secret on the answer page, not in the address.
    const long = page.locator(`#key-${longName.keyId}`);
    await long.locator("summary:text('Rotate')").click();
    await long.locator("input[name=overlap_hours]").fill("2");
    await long.locator(`#rotate-${longName.keyId}`).click();
    const secret = await page.locator("#secret").inputValue();
    expect(secret).toMatch(/^hsk_live_/);
    expect(page.url()).toBe(`${base()}/admin/console/partners/keys/${longName.keyId}/rotate`);
    expect(await page.locator("#copy-now").innerText()).toContain("Copy it now");
    expect(await page.locator("#overlap").innerText()).toContain("The old secret keeps working until 2026-04-01 14:00:00 UTC");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-partners-secret-390.png");
    await page.click("#back");
    expect(await page.content()).not.toContain(secret);

    // The disable form without its csrf_token, sent with this browser's session cookie: refused, the key stays active.
    const session = (await browser.context!.cookies()).find((c) => c.name === "herald_admin_session")!;
    const forged = await fetch(`${base()}/admin/console/partners/keys/${acme.keyId}/disable`, {
      method: "POST",
      headers: { cookie: `herald_admin_session=${session.value}`, "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
      body: new URLSearchParams({ reason: "forged", confirm: "yes" }).toString(),
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    const keys = (await operator(h!, token).get("/admin/partners/keys?status=active")).body.keys as Array<{ key_id: string }>;
    expect(keys.map((k) => k.key_id).sort()).toEqual([acme.keyId, longName.keyId].sort());
  },
  120_000,
);

/**
 * Words of the page's tables drawn across two lines: a word broken inside itself, as "sandbo x". A break after a
 * hyphen ("2026-04-" / "01") is the language's own and not counted: each part between hyphens is a word here.
 */
const BROKEN_WORDS = `(() => {
  const broken = [];
  for (const table of document.querySelectorAll("table.data")) {
    const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.parentElement.checkVisibility()) continue; // inside a closed <details>
      for (const m of node.textContent.matchAll(/[^\\s-]+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
})()`;

/** Each key id: whether it is on one line, and whether all of it shows without scrolling its cell. */
const KEY_IDS = `[...document.querySelectorAll("code.key-id")].map((c) => ({
  id: c.textContent,
  oneLine: c.getClientRects().length === 1 && c.getBoundingClientRect().height < 30,
  whole: c.scrollWidth <= c.clientWidth,
}))`;

test.skipIf(!present)(
  "long key ids and words stay whole: 'sandbox' never breaks inside itself; a key id is one line, all of it shown from 900 px, scrolling in a narrower column",
  async () => {
    const page = await browser.page();
    await page.goto(`${base()}/admin/console/partners`);
    for (const width of [760, 900, 1024, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await noHorizontalOverflow(page);
      expect({ width, broken: await page.evaluate(BROKEN_WORDS) }).toEqual({ width, broken: [] });
      const ids = (await page.evaluate(KEY_IDS)) as Array<{ id: string; oneLine: boolean; whole: boolean }>;
      expect(ids.map((k) => k.id).sort()).toEqual([acme.keyId, globex.keyId, longName.keyId].sort());
      expect({ width, oneLine: ids.every((k) => k.oneLine) }).toEqual({ width, oneLine: true });
      if (width >= 900) expect({ width, whole: ids.every((k) => k.whole) }).toEqual({ width, whole: true });
    }
    expect(await page.locator(`#key-${globex.keyId} td[data-label=Mode]`).innerText()).toBe("sandbox");
    await browser.screenshot(page, "console-partners-keys-1280.png");
  },
  60_000,
);
