import { afterEach, describe, expect, test } from "bun:test";
import Parser from "rss-parser";
import { CHECK_NAMES } from "../../src/status/engine";
import { createTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { insertRequest, insertSnapshot, iso } from "./support";

// The human status page (server-rendered HTML), the incident feed (parsed with a real RSS parser) and the
// uptime badges. The browser test (page.browser.test.ts) renders the same page in Chromium.

let h: TestApp | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

const T0 = "2026-03-01T12:00:00.000Z";

const breakDatabase = (h: TestApp) => h.ctx.db.sqlite.exec("DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)");

function insertIncident(h: TestApp, startedAt: string, endedAt: string | null, severity: "warn" | "bad", checks: Record<string, string>, summary: Record<string, string>) {
  h.ctx.db.sqlite
    .query("INSERT INTO status_incidents (started_at, ended_at, severity, current_severity, checks, summary, opened_snapshot_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?)")
    .run(startedAt, endedAt, severity, severity, JSON.stringify(checks), JSON.stringify(summary), startedAt);
}

describe("GET /status", () => {
  test("all ok: HTML without JavaScript, the headline, every check, 90 bars per row, the proofs and percentiles", async () => {
    h = createTestApp({ clock: new FakeClock(T0) });
    for (let ms = 1; ms <= 100; ms++) insertRequest(h, iso(T0, -5), 200, ms * 1000);
    const res = await h.request("/status");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=30");
    const html = await res.text();
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toContain("<script");
    expect(html).toContain("<title>Herald status: OK</title>");
    expect(html).toContain("All systems operational");
    for (const name of CHECK_NAMES) expect(html).toContain(`id="check-${name}"`);
    // One bar per UTC day for 90 days: the overall row and one row per check.
    expect(html.match(/<li class="bar bar-/g)!.length).toBe(90 * (1 + CHECK_NAMES.length));
    expect(html).toContain('title="2026-03-01: no data"'); // nothing stored yet
    expect(html).toContain('title="2025-12-02: no data"'); // the first of the 90 days
    for (const label of ["Holder cache", "Holder growth", "Public-stats cache", "Token distribution", "Mint authorities", "Snapshot jobs rollup", "Transaction sync"]) expect(html).toContain(`>${label}</th>`);
    expect(html).toContain('href="/api/public/holder-cache-freshness.csv"');
    // Percentiles, not averages: 1..100 ms → p50 50, p95 95, p99 99.
    expect(html).toContain("<dt>p50</dt><dd>50 ms</dd>");
    expect(html).toContain("<dt>p95</dt><dd>95 ms</dd>");
    expect(html).toContain("<dt>p99</dt><dd>99 ms</dd>");
    expect(html).toContain("No incidents in the last 14 days.");
    expect(html).toContain('href="/status/feed.rss"');
  });

  test("a bad check: the headline says outage, its row says BAD with the reason; incidents are listed, escaped", async () => {
    h = createTestApp({ clock: new FakeClock(T0) });
    breakDatabase(h);
    insertIncident(h, iso(T0, -30), null, "bad", { database: "bad" }, { database: "migrations behind <script>alert(1)</script> & more" });
    insertIncident(h, iso(T0, -3000), iso(T0, -2990), "warn", { jobs: "warn" }, { jobs: "stale: status-snapshot" });
    const html = await (await h.request("/status")).text();
    expect(html).toContain("<title>Herald status: BAD</title>");
    expect(html).toContain("Outage: at least one check is failing");
    expect(html).toMatch(/<tr id="check-database" class="row-bad"><th scope="row"><code>database<\/code><\/th><td><span class="tag tag-bad">BAD<\/span><\/td><td>migrations behind: \d+\/\d+ applied<\/td>/);
    expect(html).toContain('id="incident-1"');
    expect(html).toContain("Ongoing: database");
    expect(html).toContain("Resolved: jobs");
    expect(html).toContain("migrations behind &lt;script&gt;alert(1)&lt;/script&gt; &amp; more");
    expect(html).not.toContain("<script>alert(1)");
  });

  test("bars colour each day from the stored snapshots; maintenance is shown", async () => {
    h = createTestApp({ clock: new FakeClock(T0) });
    // Yesterday: a snapshot every minute all day (1440 min observed), warn for the first 30 minutes.
    const day = "2026-02-28T00:00:00.000Z";
    for (let m = 0; m < 1440; m += 1) insertSnapshot(h, iso(day, m), m < 30 ? "warn" : "ok", m < 30 ? { webhooks: "warn" } : {});
    // Today: bad from 00:00 to 01:00 then ok until now (12:00) → 60 of 720 minutes = 8.33 % ≥ 5 % → red
    for (let m = 0; m < 720; m += 1) insertSnapshot(h, iso("2026-03-01T00:00:00.000Z", m), m < 60 ? "bad" : "ok", m < 60 ? { database: "bad" } : {});
    const html = await (await h.request("/status")).text();
    // yesterday: 30 / 1440 = 2.083 % degraded → amber, 97.92 % up
    expect(html).toContain('<li class="bar bar-warn" title="2026-02-28: 97.92% up">');
    expect(html).toContain('<li class="bar bar-bad" title="2026-03-01: 91.67% up">');
    // per check: webhooks only yesterday, database only today
    expect(html).toMatch(/aria-label="webhooks: [^"]*">(?:<li class="bar bar-none"[^>]*><span class="sr">[^<]*<\/span><\/li>){88}<li class="bar bar-warn"/);
  });
});

describe("GET /status/feed.rss", () => {
  test("valid RSS 2.0 that a real parser reads: one item per incident, stable guid, RFC 822 dates", async () => {
    h = createTestApp({ clock: new FakeClock(T0) });
    insertIncident(h, iso(T0, -120), iso(T0, -60), "bad", { chain_rpc: "bad" }, { chain_rpc: "no usable RPC URL <&> \u0001 (1 configured)" });
    insertIncident(h, iso(T0, -10), null, "warn", { jobs: "warn", webhooks: "warn" }, { jobs: "stale: x", webhooks: "5 pending" });
    const res = await h.request("/status/feed.rss");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/rss+xml; charset=utf-8");
    const xml = await res.text();
    expect(xml).toContain('<rss version="2.0"');
    const feed = await new Parser().parseString(xml);
    expect(feed.title).toBe("Herald status: incidents");
    expect(feed.link).toBe("http://localhost:3000/status");
    expect(feed.items).toHaveLength(2);
    const [open, resolved] = feed.items;
    expect(open!.title).toBe("[Ongoing] Degraded service: jobs, webhooks");
    expect(open!.guid).toBe("herald-incident-2");
    expect(new Date(open!.pubDate!).toISOString()).toBe(iso(T0, -10));
    expect(open!.link).toBe("http://localhost:3000/status#incident-2");
    expect(resolved!.title).toBe("[Resolved] Outage: chain_rpc");
    expect(resolved!.content).toContain("no usable RPC URL <&>");
    expect(resolved!.content).toContain(`resolved ${iso(T0, -60)}`);
  });

  test("no incidents: an empty channel that still parses", async () => {
    h = createTestApp({ clock: new FakeClock(T0) });
    const feed = await new Parser().parseString(await (await h.request("/status/feed.rss")).text());
    expect(feed.items).toEqual([]);
    expect(feed.title).toBe("Herald status: incidents");
  });
});

describe("GET /status/badge/{check}.svg", () => {
  function lastHour(h: TestApp) {
    // The last 60 minutes, a snapshot a minute; warn (chain_rpc) for 3 of them → 3 / 60 = 5 % degraded, 95 % up.
    for (let m = 0; m < 60; m++) insertSnapshot(h, iso(T0, m - 60), m < 3 ? "warn" : "ok", m < 3 ? { chain_rpc: "warn" } : {});
  }

  test("overall and per check uptime, coloured by the steps; the window picks the period", async () => {
    h = createTestApp({ clock: new FakeClock(T0) });
    lastHour(h);
    const res = await h.request("/status/badge/overall.svg");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    const svg = await res.text();
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('aria-label="uptime 24h: 95%"');
    expect(svg).toContain('fill="#dfb317"'); // ≥ 95 % → yellow
    const rpc = await (await h.request("/status/badge/chain_rpc.svg?window=7d")).text();
    expect(rpc).toContain("<title>chain_rpc 7d: 95%</title>");
    const db = await (await h.request("/status/badge/database.svg?window=90d")).text();
    expect(db).toContain("<title>database 90d: 100%</title>");
    expect(db).toContain('fill="#4c1"');
  });

  test("no snapshots: no data, grey", async () => {
    h = createTestApp({ clock: new FakeClock(T0) });
    const svg = await (await h.request("/status/badge/jobs.svg?window=30d")).text();
    expect(svg).toContain("<title>jobs 30d: no data</title>");
    expect(svg).toContain('fill="#9f9f9f"');
  });

  test("an unknown check is a JSON 404; a bad window or file name is a 400", async () => {
    h = createTestApp();
    const unknown = await h.json("/status/badge/nonsense.svg");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("not_found");
    for (const path of ["/status/badge/overall.svg?window=1y", "/status/badge/overall.png", "/status/badge/Overall.svg", "/status/badge/..%2Fx.svg"]) {
      const r = await h.json(path);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_query");
    }
  });
});
