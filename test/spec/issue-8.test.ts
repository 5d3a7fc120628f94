// Issue 8 (public status, trust and the developer portal), re-verified over HTTP: every check the status answer
// names has an uptime badge for each window the issue lists (24h/7d/30d/90d), and every evidence pointer of
// /trust.json and of the trust dashboard answers (a GET, or the route exists with another method).
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

test("issue 8: every status check has an SVG badge for 24h, 7d, 30d and 90d; another window is refused", async () => {
  h = await openTestApp();
  const checks = Object.keys((await h.json("/api/public/system-status")).body.checks);
  expect(checks).toEqual(expect.arrayContaining(["database", "reliability", "jobs", "chain_rpc", "mint_authority", "webhooks", "request_errors"]));
  expect(checks.filter((c) => c.startsWith("freshness_")).length).toBe(7);
  for (const check of checks) {
    for (const window of ["24h", "7d", "30d", "90d"]) {
      const res = await h.request(`/status/badge/${check}.svg?window=${window}`);
      expect([check, window, res.status, res.headers.get("content-type")]).toEqual([check, window, 200, "image/svg+xml; charset=utf-8"]);
      expect(await res.text()).toContain(`${check} ${window}`);
    }
  }
  expect((await h.request("/status/badge/database.svg?window=1y")).status).toBe(400);
});

test("issue 8: every evidence pointer of trust.json and the trust dashboard answers", async () => {
  h = await openTestApp();
  for (const source of ["/trust.json", "/transparency/trust-dashboard.json"]) {
    const text = await (await h.request(source)).text();
    const paths = new Set([...text.matchAll(/"(?:http:\/\/localhost:3000)?(\/[A-Za-z0-9_./-]+)"/g)].map((m) => m[1]!));
    expect(paths.size).toBeGreaterThan(10);
    for (const path of paths) {
      const res = await h.request(path);
      await res.arrayBuffer();
      // 405: the pointer names an operator action (POST /admin/backup/run), which exists with its own method.
      expect([source, path, res.status < 400 || res.status === 405]).toEqual([source, path, true]);
    }
  }
});
