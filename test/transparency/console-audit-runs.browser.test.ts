import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { chromiumPresent, noHorizontalOverflow, OperatorBrowser, signIn } from "../support/browser";
import { createAdminToken } from "../support/partner";
import { type AuditWorld, chainRound, P, plantedWorld } from "./support";

// The audit-runs page in real headless Chromium (JavaScript off), as an operator uses it: sign in through the
// form, open "Audit runs" from the header, press "Run audit now" over the planted chain fixture, read the run and
// its anomalies at 1280 px and 390 px without horizontal scrolling (long signatures, the triage forms opened),
// triage one anomaly and see it saved and published. A triage posted without the CSRF token, with the browser's
// own session cookie, is refused and changes nothing. Screenshots: a temp dir, or OPS_SCREENSHOT_DIR.

const present = chromiumPresent("test/transparency/console-audit-runs.browser.test.ts");
const PAGE = "/admin/console/audit-runs";

let w: AuditWorld | undefined;
let h: TestApp | undefined;
let server: ReturnType<TestApp["app"]["listen"]> | undefined;
const browser = new OperatorBrowser();
let token = "";
const base = () => `http://127.0.0.1:${server!.server!.port}`;

beforeAll(async () => {
  if (!present) return;
  w = await plantedWorld();
  h = w.h;
  await chainRound(h);
  await chainRound(h);
  token = await createAdminToken(h, "auditor");
  server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  await browser.launch();
}, 120_000);

afterAll(async () => {
  await browser.close();
  await server?.stop(true);
  await w?.close();
});

test.skipIf(!present)(
  "sign in, open Audit runs from the header, run the audit, read its anomalies, triage one; readable at 390 px",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, base(), token);
    await page.click(`#console-nav a[href="${PAGE}"]`);
    expect(page.url()).toBe(`${base()}${PAGE}`);
    expect(await page.locator("main h1").innerText()).toBe("Audit runs");
    expect(await page.locator("#run-rows-none").innerText()).toContain("None.");

    // Run the audit now: back to the new run, its anomalies below.
    await page.click("#run-audit");
    expect(page.url()).toBe(`${base()}${PAGE}?run=1&done=ran&ref=1`);
    expect(await page.locator("#done").innerText()).toBe("Audit run #1 finished; its anomalies are below.");
    expect(await page.locator("#run-1 td[data-label=Trigger]").innerText()).toBe("manual");
    expect(await page.locator("#run-1 td[data-label=Verdict]").innerText()).toBe("bad");
    expect(await page.locator("#anomaly-rows tbody tr").count()).toBe(7);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-audit-runs-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-audit-runs-390.png");
    for (const summary of await page.locator("details.act summary").all()) await summary.click();
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-audit-runs-forms-390.png");

    // Triage the balance mismatch.
    const row = page.locator('tr[id="sig-token-snapshot:2"]');
    await row.locator("select[name=status]").selectOption("false_positive");
    await row.locator("input[name=owner]").fill("Treasury on-call (Dana)");
    await row.locator("input[name=eta_utc]").fill("2026-02-01");
    await row.locator("textarea[name=note]").fill("Reconciled with the custodian's statement: a pending deposit.");
    await row.locator('button[id="triage-token-snapshot:2"]').click();
    expect(page.url()).toBe(`${base()}${PAGE}?run=1&done=triaged&ref=token-snapshot%3A2`);
    expect(await page.locator("#done").innerText()).toBe("Triage of token-snapshot:2 saved; triage.json publishes it.");
    expect(await page.locator('tr[id="sig-token-snapshot:2"] .triage').innerText()).toContain(
      "false_positive, owner Treasury on-call (Dana), ETA 2026-02-01 00:00:00 UTC — Reconciled with the custodian's statement",
    );
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-audit-runs-triaged-390.png");

    // The triage form without its csrf_token, sent with this browser's session cookie: refused, nothing changed.
    const session = (await browser.context!.cookies()).find((c) => c.name === "herald_admin_session")!;
    const forged = await fetch(`${base()}${PAGE}/triage/sync-run%3A2`, {
      method: "POST",
      headers: { cookie: `herald_admin_session=${session.value}`, "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
      body: new URLSearchParams({ status: "resolved", owner: "forged" }).toString(),
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    const triage = (await h!.json(`${P}/triage.json`)).body.rows as Array<{ signature: string; status: string }>;
    expect(triage.map((t) => [t.signature, t.status])).toEqual([["token-snapshot:2", "false_positive"]]);
  },
  120_000,
);
