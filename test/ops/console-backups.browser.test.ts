import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { servedForBrowser } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { noHorizontalOverflow, signIn } from "../support/browser";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { operator } from "../status/support";
import { testOn } from "../support/skipped";

// The backups page in real headless Chromium (JavaScript off), as an operator uses it: sign in through the form,
// open Backups from the header, read it at 1280 px and 390 px without horizontal scrolling, press "Take a backup
// now" and see the result line and the new row, download the file by its link (with the session) and find the
// sha256 the page shows; a second press in the same (fake) millisecond comes back as the page with the error.
// A post without the CSRF token, with the browser's own session cookie, is refused. Screenshots: a temp dir, or
// OPS_SCREENSHOT_DIR. On PostgreSQL Herald takes no backups of its own (VACUUM INTO copies are the SQLite file's):
// there the page, read the same way, says where the database's own backups are.

let h: TestApp | undefined;
let token = "";

const { present, browser, base } = servedForBrowser("test/ops/console-backups.browser.test.ts", async () => {
  h = await openTestApp({ clock: new FakeClock("2026-04-01T12:00:00.000Z"), env: { BACKUP_KEEP: "3" } });
  token = await createAdminToken(h, "on-call");
  return h;
});

/** Signs in at 1280 px (the page first sends a stranger to the sign-in form), then opens Backups from the header. */
async function openBackups() {
  const page = await browser.page();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${base()}/admin/console/backups`, { waitUntil: "load" });
  expect(new URL(page.url()).pathname).toBe("/admin/sign-in");
  await signIn(page, base(), token);
  await page.click('#console-nav a[href="/admin/console/backups"]');
  expect(page.url()).toBe(`${base()}/admin/console/backups`);
  expect(await page.locator("main h1").innerText()).toBe("Backups");
  return page;
}

// Taking and downloading a VACUUM INTO copy is about the SQLite file.
testOn("sqlite", "test/ops/console-backups.browser.test.ts", test.skipIf(!present))(
  "sign in, open Backups from the header, take a backup, download it, see a refusal; readable at 390 px",
  async () => {
    const page = await openBackups();
    expect(await page.locator("#backup-rows-none").innerText()).toBe("None.");
    expect(await page.locator("#backup-age").innerText()).toContain("No backup yet");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-backups-empty-1280.png");

    await page.click("#run");
    expect(page.url()).toBe(`${base()}/admin/console/backups?done=made&backup=herald-2026-04-01T12-00-00-000Z.db&pruned=0`);
    expect(await page.locator("#done").innerText()).toBe("Backup herald-2026-04-01T12-00-00-000Z.db made and checked.");
    expect(await page.locator("#backup-rows tbody tr").count()).toBe(1);
    const sha = await page.locator("#backup-rows td[data-label='SHA-256']").innerText();
    expect(sha).toMatch(/^[0-9a-f]{64}$/);
    await browser.screenshot(page, "console-backups-1280.png");

    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#backup-rows a[download]")]);
    expect(download.suggestedFilename()).toBe("herald-2026-04-01T12-00-00-000Z.db");
    const file = readFileSync((await download.path())!);
    expect(createHash("sha256").update(file).digest("hex")).toBe(sha);

    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-backups-390.png");

    // The clock has not moved: a second backup would have the same name. The page says so, with 409.
    const [refused] = await Promise.all([page.waitForEvent("response", (r) => r.request().method() === "POST"), page.click("#run")]);
    expect(refused.status()).toBe(409);
    expect(await page.locator("#form-error").innerText()).toContain("already exists");
    expect(await page.locator("#backup-rows tbody tr").count()).toBe(1);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-backups-refused-390.png");

    // The form without its csrf_token, sent with this browser's session cookie: refused, nothing made.
    const session = (await browser.context!.cookies()).find((c) => c.name === "herald_admin_session")!;
    h!.clock.advance(60_000);
    const forged = await fetch(`${base()}/admin/console/backups/run`, {
      method: "POST",
      headers: { cookie: `herald_admin_session=${session.value}`, "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
      body: "",
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    expect((await operator(h!, token).get("/admin/backups")).body.total).toBe(1);
  },
  120_000,
);

testOn("postgres", "test/ops/console-backups.browser.test.ts", test.skipIf(!present))(
  "on PostgreSQL: sign in, open Backups from the header, read where the database's own backups are at 1280 and 390 px",
  async () => {
    const page = await openBackups();
    expect(await page.locator("#database-engine").innerText()).toMatch(/^PostgreSQL \d/);
    expect(await page.locator("#backups-not-applicable").innerText()).toMatch(/pg_dump.*pg_basebackup/);
    expect(await page.locator("#run").count()).toBe(0);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-backups-postgres-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-backups-postgres-390.png");
    const listed = await operator(h!, token).get("/admin/backups");
    expect([listed.status, listed.body.error]).toEqual([409, "backup_not_on_postgres"]);
  },
  120_000,
);
