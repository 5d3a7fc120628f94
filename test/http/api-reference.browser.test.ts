import { afterEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM, chromiumPresent } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { AUDIENCES } from "../../src/http/openapi/audiences";
import { messengerEnv } from "../messenger/support";

// The API reference (/api/docs, Scalar) in real headless Chromium (Debian's /usr/bin/chromium driven by
// playwright-core), from a real server on 127.0.0.1: it renders with no request leaving 127.0.0.1, and an
// operation shows its request, its response example and the three code samples; it shows one audience at a time
// (src/http/openapi/audiences.ts), the partners' first, and its selector switches between them. Screenshots at 1280 px go to
// HERALD_SCREENSHOT_DIR when set (to look at them), else to a temp dir removed after the test. Skipped only
// when /usr/bin/chromium is absent (CI installs it: see .ci/run).

const present = chromiumPresent("test/http/api-reference.browser.test.ts");

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

let h: TestApp | undefined;
let browser: Browser | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await browser?.close();
  browser = undefined;
  await h?.close();
  h = undefined;
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function shotsDir(): string {
  const kept = process.env.HERALD_SCREENSHOT_DIR;
  if (kept) {
    mkdirSync(kept, { recursive: true });
    return kept;
  }
  const dir = mkdtempSync(join(tmpdir(), "herald-reference-shots-"));
  dirs.push(dir);
  return dir;
}

async function screenshot(page: Page, file: string): Promise<void> {
  await page.screenshot({ path: file });
  expect(statSync(file).size).toBeGreaterThan(10_000);
  expect(readFileSync(file).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
}

/**
 * Scalar has drawn its document: the page's own list of operations (src/http/openapi/reference-index.ts), shown over
 * the page until then, is gone.
 */
const scalarLoaded = (page: Page) => page.locator(".ix").waitFor({ state: "detached", timeout: 60_000 });

/**
 * A page whose every request is checked: only 127.0.0.1 (and in-page data: and blob: URLs) may be fetched. Whatever
 * the page's Content-Security-Policy refused (Chromium reports it on the console) goes to `refused`: the pages must
 * work under their own policy (src/http/openapi/ui.ts), so a test expects none.
 */
async function offlinePage(outside: string[], refused: string[] = []): Promise<Page> {
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === "127.0.0.1" || url.protocol === "data:" || url.protocol === "blob:") return route.continue();
    outside.push(url.href);
    return route.abort();
  });
  context.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) refused.push(m.text());
  });
  return context.newPage();
}

test.skipIf(!present)(
  "the reference renders offline and shows an operation with its request, response example and code samples",
  async () => {
    h = await openTestApp();
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
    const base = `http://127.0.0.1:${server.server!.port}`;
    const shots = shotsDir();
    const outside: string[] = [];
    const refused: string[] = [];
    try {
      const page = await offlinePage(outside, refused);
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));

      // Until Scalar has drawn, the page shows its own list of the operations, each a link to its place (Scalar may be
      // done before the test looks here, unthrottled: the list is read from the page's HTML).
      expect(await (await fetch(`${base}/api/docs`)).text()).toContain('<a href="#partners/tag/partner/POST/api/partner/users">');
      await page.goto(`${base}/api/docs`, { waitUntil: "load" });
      await scalarLoaded(page);
      await page.getByRole("heading", { name: "Herald API: Partners (signed API)", exact: true }).waitFor({ timeout: 30_000 });
      // The introduction shows the Python signer the samples import.
      await page.getByText("def herald(method, url, body=None").first().waitFor();
      await screenshot(page, join(shots, "api-reference-1280.png"));

      // A link from before the split by audience: sent to the partners' document, on the operation.
      await page.goto(`${base}/api/docs#tag/partner/POST/api/partner/users`, { waitUntil: "load" });
      const heading = page.getByRole("heading", { name: "Create a user; wallet_address becomes the primary wallet" });
      await heading.waitFor({ timeout: 30_000 });
      expect(new URL(page.url()).hash).toBe("#partners/tag/partner/POST/api/partner/users");
      const operation = page.locator("section").filter({ has: heading }).first();
      // The request: its body fields; the response example: the named User's example, with its integer id.
      await operation.getByText("external_id", { exact: true }).first().waitFor();
      const example = (await operation.locator("pre, code").allInnerTexts()).join("\n");
      expect(example).toContain('"id": 42,');
      expect(example).toContain('"external_id": "player-1001"');
      // The code samples: curl with `herald sign` first, then TypeScript with the client, then Python.
      const picker = operation.getByTestId("client-picker").first();
      expect(await picker.innerText()).toContain("curl (herald sign)");
      expect(await operation.innerText()).toContain('herald sign --key "$HERALD_KEY_ID" --secret "$HERALD_SECRET"');
      await screenshot(page, join(shots, "api-reference-operation-1280.png"));
      await picker.click();
      expect(await page.getByRole("option").allInnerTexts()).toEqual(["curl (herald sign)", "TypeScript (HeraldClient)", "Python"]);
      await page.getByRole("option", { name: "Python" }).click();
      await operation.getByText("from herald_sign import herald").first().waitFor();
      await picker.click();
      await page.getByRole("option", { name: "TypeScript (HeraldClient)" }).click();
      await operation.getByText('import { HeraldApiError, HeraldClient } from "@herald/client";').first().waitFor();
      await screenshot(page, join(shots, "api-reference-typescript-1280.png"));

      expect(errors).toEqual([]);
      expect(outside).toEqual([]);
      expect(refused).toEqual([]);
    } finally {
      await server.stop(true);
    }
  },
  120_000,
);

test.skipIf(!present)(
  "old /api/docs links keep working: a Swagger tag link opens the tag, an operation link opens the Swagger UI",
  async () => {
    h = await openTestApp();
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
    const base = `http://127.0.0.1:${server.server!.port}`;
    const outside: string[] = [];
    const refused: string[] = [];
    try {
      const page = await offlinePage(outside, refused);
      await page.goto(`${base}/api/docs#/partner`, { waitUntil: "load" });
      expect(new URL(page.url()).hash).toMatch(/^#partners\/tag\/partner/);
      // An old operation link arrives as a fresh page load (a bookmark, a link in a doc). A same-document hash change
      // on the already-running reference races with Scalar's own router, so the test does not use one.
      const fresh = await page.context().newPage();
      await fresh.goto(`${base}/api/docs#/partner/post_api_partner_users`, { waitUntil: "load" });
      await fresh.waitForURL(`${base}/api/docs/swagger#/partner/post_api_partner_users`, { timeout: 30_000 });
      await fresh.locator(".swagger-ui .info .title").first().waitFor({ timeout: 30_000 });
      expect(await fresh.locator(".swagger-ui .info .title").first().innerText()).toContain("Herald API");
      // The Swagger UI draws its operations, and an opened one, under its policy.
      await fresh.locator(".opblock-summary").first().click();
      await fresh.locator(".opblock-body").first().waitFor({ timeout: 30_000 });
      expect(outside).toEqual([]);
      expect(refused).toEqual([]);
    } finally {
      await server.stop(true);
    }
  },
  120_000,
);

/** The first operation of `audience` in Scalar's sidebar (its entries' ids start with the document's slug). */
const operationOf = (page: Page, audience: string) =>
  page.locator(`li[data-sidebar-id^="${audience}/tag/"] li[data-sidebar-id^="${audience}/tag/"] > a`).first();

test.skipIf(!present)(
  "one audience at a time: the partners' first, each shows its operations, the selector switches, an old link lands on its audience",
  async () => {
    h = await openTestApp({ env: messengerEnv() });
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
    const base = `http://127.0.0.1:${server.server!.port}`;
    const shots = shotsDir();
    const outside: string[] = [];
    const refused: string[] = [];
    try {
      const page = await offlinePage(outside, refused);
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      const fetched: string[] = [];
      page.on("request", (r) => {
        const path = new URL(r.url()).pathname;
        if (path.startsWith("/api/openapi")) fetched.push(path);
      });
      await page.goto(`${base}/api/docs`, { waitUntil: "load" });
      await scalarLoaded(page);
      await operationOf(page, "partners").waitFor({ timeout: 30_000 });
      // The partners' document is the one asked for first; the whole one is never fetched by the reference.
      expect(fetched[0]).toBe("/api/openapi/partners.json");
      const selector = page.locator(".document-selector button").first();
      expect(await selector.innerText()).toBe("Partners (signed API)");
      await selector.click();
      expect(await page.getByRole("option").allInnerTexts()).toEqual(AUDIENCES.map((a) => a.title));
      await page.keyboard.press("Escape");
      for (const a of AUDIENCES.slice(1)) {
        await selector.click();
        await page.getByRole("option", { name: a.title, exact: true }).click();
        await operationOf(page, a.slug).waitFor({ timeout: 30_000 });
        expect(await selector.innerText()).toBe(a.title);
        expect(new URL(page.url()).hash.startsWith(`#${a.slug}`)).toBe(true);
        await page.getByRole("heading", { name: `Herald API: ${a.title}`, exact: true }).waitFor({ timeout: 30_000 });
        await screenshot(page, join(shots, `api-reference-${a.slug}-1280.png`));
      }
      expect(fetched).not.toContain("/api/openapi.json");
      // An old link to an operator route: the operators' document, on it.
      const fresh = await page.context().newPage();
      await fresh.goto(`${base}/api/docs#tag/admin/GET/admin/partners/keys`, { waitUntil: "load" });
      const keys = fresh.locator('section[id="operators/tag/admin/GET/admin/partners/keys"] .operation-title');
      await keys.waitFor({ timeout: 60_000 });
      expect(await keys.innerText()).toContain("List partner keys");
      expect(new URL(fresh.url()).hash).toBe("#operators/tag/admin/GET/admin/partners/keys");
      expect(await fresh.locator(".document-selector button").first().innerText()).toBe("Operators (admin)");
      // An operation carrying the tag of another audience (the messenger's console is the operators'): found by the
      // page in its list, not guessed from the tag.
      const console = await page.context().newPage();
      await console.goto(`${base}/api/docs#tag/messenger/GET/admin/console/messenger`, { waitUntil: "load" });
      expect(new URL(console.url()).hash).toBe("#operators/tag/messenger/GET/admin/console/messenger");
      await scalarLoaded(console);
      expect(await console.locator(".document-selector button").first().innerText()).toBe("Operators (admin)");
      expect(errors).toEqual([]);
      expect(outside).toEqual([]);
      expect(refused).toEqual([]);
    } finally {
      await server.stop(true);
    }
  },
  180_000,
);
