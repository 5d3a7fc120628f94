import { afterEach, expect, test } from "bun:test";
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
  expect(html).toContain('<html lang="en" data-app-base="/app">');
  expect(html).toMatch(/<script src="\/app\/assets\/app-[0-9a-f]{16}\.js"><\/script>/);
  expect(html).toContain('<a href="/app/fairness">');
});

test("MESSENGER_MINI_APP_PATH=/play/tg moves the pages, their links and scripts; nothing is left at /app", async () => {
  h = await openMessengerApp({ env: { MESSENGER_MINI_APP_PATH: "/play/tg" } });
  const html = await (await h.request("/play/tg")).text();
  expect(html).toContain('<html lang="en" data-app-base="/play/tg">');
  expect(html).toContain('<a href="/play/tg/fairness">');
  const script = /<script src="(\/play\/tg\/assets\/app-[0-9a-f]{16}\.js)"><\/script>/.exec(html)![1]!;
  expect((await h.request(script)).status).toBe(200);
  const fairness = await h.request("/play/tg/fairness");
  expect(fairness.status).toBe(200);
  const check = await fairness.text();
  expect(check).toContain('<a href="/play/tg">Back to the games</a>');
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
