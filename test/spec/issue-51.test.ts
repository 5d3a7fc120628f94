// Issue 51 (the players' mini-app and its fairness page), re-verified: the fairness page is opened from the mini-app
// inside Telegram's web client, so it must carry the mini-app's policy ("frame-ancestors https://web.telegram.org",
// no X-Frame-Options: PagePolicy.framedBy), revalidate with ETag/304, and load only Herald's own script, cached a
// year under its hash. test/http/security-headers.test.ts checks /app; this checks /app/fairness, on any target
// (HERALD_TEST_TARGET=dist/herald: the scripts are the ones embedded in the binary).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { messengerEnv } from "../messenger/support";
import { startTarget, TARGET, type TargetApp } from "../support/target";

let h: TargetApp;
beforeAll(async () => {
  h = await startTarget({ env: messengerEnv() });
});
afterAll(() => h?.stop());

test(`GET /app/fairness (${TARGET.label}): framed only by Telegram's web client, no X-Frame-Options, revalidated, its one script Herald's`, async () => {
  const page = await h.request("/app/fairness");
  const html = await page.text();
  expect([page.status, page.headers.get("content-type"), page.headers.get("cache-control")]).toEqual([200, "text/html; charset=utf-8", "no-cache"]);
  const csp = page.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("frame-ancestors https://web.telegram.org");
  expect(csp).toContain("connect-src 'self'");
  expect(page.headers.get("x-frame-options")).toBeNull();
  const again = await h.request("/app/fairness", { headers: { "if-none-match": page.headers.get("etag")! } });
  expect(again.status).toBe(304);
  const src = /<script src="(\/app\/assets\/fairness-[0-9a-f]{16}\.js)" defer><\/script>/.exec(html)![1]!;
  const script = await h.request(src);
  expect([script.status, script.headers.get("cache-control")]).toEqual([200, "public, max-age=31536000, immutable"]);
  expect((await script.text()).length).toBeGreaterThan(1000);
});
