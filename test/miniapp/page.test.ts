import { afterEach, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import type { TestApp } from "../support/app";
import { openMessengerApp } from "../messenger/support";

// Where the mini-app's pages are served (MESSENGER_MINI_APP_PATH): every link and script name follows the path, the
// OpenAPI document names the served paths, and nothing is routed at the default /app once another path is set.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

test("the default: /app, /app/fairness and their scripts under /app/assets/", async () => {
  h = await openMessengerApp();
  const page = await h.request("/app");
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toMatch(/<html lang="en" data-app-base="\/app" data-messages-ru="\/app\/assets\/messages-ru-[0-9a-f]{16}\.js">/);
  // The Russian catalog is served where the page says, and the page's script carries no other language.
  const ru = /data-messages-ru="([^"]+)"/.exec(html)![1]!;
  expect((await h.request(ru)).status).toBe(200);
  expect(html).toMatch(/<script src="\/app\/assets\/app-[0-9a-f]{16}\.js" defer><\/script>/);
  expect(html).toContain('<a href="/app/fairness" data-t="wheel.check_page">');
});

test("the pages' scripts are small: each with its Russian catalog at most 50 KB gzipped (issue 73's budget), nothing loaded from elsewhere", async () => {
  h = await openMessengerApp();
  for (const path of ["/app", "/app/fairness"]) {
    const html = await (await h.request(path)).text();
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    expect(scripts[0]).toMatch(/^\/app\/assets\/(app|fairness)-[0-9a-f]{16}\.js$/);
    // The page's script, and the Russian catalog a Russian-speaking player's page loads besides.
    const ru = /data-messages-ru="([^"]+)"/.exec(html)![1]!;
    let gzipped = 0;
    for (const src of [scripts[0]!, ru]) {
      const body = new Uint8Array(await (await h.request(src)).arrayBuffer());
      expect(body.byteLength).toBeGreaterThan(1000);
      // All ASCII (every other character escaped): V8 scans it a byte a character.
      expect(body.every((b) => b < 128)).toBe(true);
      gzipped += gzipSync(body, { level: 9 }).byteLength;
    }
    expect(gzipped).toBeLessThanOrEqual(50 * 1024);
    // No other origin named in the page: no font, stylesheet or image from elsewhere (Telegram's own script excepted,
    // which the script loads only inside Telegram).
    expect(html.match(/https?:\/\//g) ?? []).toEqual([]);
  }
});

test("MESSENGER_MINI_APP_PATH=/play/tg moves the pages, their links and scripts; nothing is left at /app", async () => {
  h = await openMessengerApp({ env: { MESSENGER_MINI_APP_PATH: "/play/tg" } });
  const html = await (await h.request("/play/tg")).text();
  expect(html).toMatch(/<html lang="en" data-app-base="\/play\/tg" data-messages-ru="\/play\/tg\/assets\/messages-ru-[0-9a-f]{16}\.js">/);
  expect(html).toContain('<a href="/play/tg/fairness" data-t="wheel.check_page">');
  const script = /<script src="(\/play\/tg\/assets\/app-[0-9a-f]{16}\.js)" defer><\/script>/.exec(html)![1]!;
  expect((await h.request(script)).status).toBe(200);
  const fairness = await h.request("/play/tg/fairness");
  expect(fairness.status).toBe(200);
  const check = await fairness.text();
  expect(check).toContain('<a id="back" href="/play/tg" data-t="fair.back">Back to the games</a>');
  expect((await h.request(/<script src="([^"]+)"/.exec(check)![1]!)).status).toBe(200);
  // Nothing is routed at the default any more (asked of the route table: a request would be checked against the
  // default document by the contract check, where /app is the page).
  expect(h.app.routes.map((r) => r.path).filter((p) => p.startsWith("/app"))).toEqual([]);
  const doc = (await (await h.request("/api/openapi.json")).json()) as { paths: Record<string, unknown> };
  expect(Object.keys(doc.paths).filter((p) => p.startsWith("/play/") || p === "/play/tg" || p.startsWith("/app"))).toEqual([
    "/play/tg",
    "/play/tg/fairness",
    "/play/tg/assets/{file}",
  ]);
});
