import { afterEach, describe, expect, test } from "bun:test";
import Parser from "rss-parser";
import { COMPONENT_IDS } from "../../src/status/components";
import { CHECK_NAMES } from "../../src/status/checks/engine";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { classOf, elementById, factsOf, rowById, rowsOf, textById, textOf, titleOf } from "../support/console";
import { createAdminToken } from "../support/partner";
import { insertRequest, insertSnapshot, iso, operator } from "./support";

// The human status page (server-rendered HTML), the incident feed (parsed with a real RSS parser) and the
// uptime badges. The browser test (page.browser.test.ts) renders the same page in Chromium.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const T0 = "2026-03-01T12:00:00.000Z";

/** Forgets the latest migration (each engine records them in its own table): the database check goes bad. */
const breakDatabase = (h: TestApp) =>
  h.ctx.store.run(
    h.ctx.store.dialect === "sqlite"
      ? "DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)"
      : "DELETE FROM herald_migrations WHERE name = (SELECT max(name) FROM herald_migrations)",
  );

/** A row of daily bars as a person reads it: each day's tooltip, its colour, and whether a phone hides it. */
const barsOf = (html: string, row: string) =>
  [
    ...(new RegExp(`aria-label="${row}: one bar per day[^"]*">([\\s\\S]*?)</ol>`).exec(html)?.[1] ?? "").matchAll(
      /<li class="bar bar-(\w+)( bar-old)?" title="([^"]*)">/g,
    ),
  ].map((m) => ({ title: m[3]!, colour: m[1]!, old: m[2] !== undefined }));

/** The updates of an incident as listed, newest first: state, time and message as one line each. */
const updatesOf = (html: string, incident: string) =>
  [...(elementById(html, incident) ?? "").matchAll(/<li class="update[^"]*">([\s\S]*?)<\/li>/g)].map((m) => textOf(m[1]!));

async function insertIncident(
  h: TestApp,
  startedAt: string,
  endedAt: string | null,
  severity: "warn" | "bad",
  checks: Record<string, string>,
  summary: Record<string, string>,
) {
  await h.ctx.store.run(
    "INSERT INTO status_incidents (started_at, ended_at, severity, current_severity, checks, summary, opened_snapshot_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
    [startedAt, endedAt, severity, severity, JSON.stringify(checks), JSON.stringify(summary), startedAt],
  );
}

describe("GET /status", () => {
  test("all ok: HTML without JavaScript, the headline, components with their checks, 90 bars per row, the proofs and percentiles", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    for (let ms = 1; ms <= 100; ms++) await insertRequest(h, iso(T0, -5), 200, ms * 1000);
    const res = await h.request("/status");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=30");
    const html = await res.text();
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toContain("<script");
    expect(titleOf(html)).toBe("Herald status: OK");
    expect(html).toContain("All systems operational");
    for (const name of CHECK_NAMES) expect(html).toContain(`id="check-${name}"`);
    for (const id of COMPONENT_IDS) expect(html).toContain(`id="component-${id}"`);
    // One bar per UTC day for 90 days: the overall row and one row per component.
    expect(html.match(/<li class="bar bar-/g)!.length).toBe(90 * (1 + COMPONENT_IDS.length));
    expect(html).toContain('title="2026-03-01: no data"'); // nothing stored yet
    expect(html).toContain('title="2025-12-02: no data"'); // the first of the 90 days
    // Older than 30 days: hidden on a phone (the browser test measures it).
    const overall = barsOf(html, "Overall");
    expect(overall.map((b) => b.old)).toEqual([...Array(60).fill(true), ...Array(30).fill(false)]);
    expect(overall.slice(59, 61)).toEqual([
      { title: "2026-01-30: no data", colour: "none", old: true },
      { title: "2026-01-31: no data", colour: "none", old: false },
    ]);
    expect(rowsOf(html, "proofs").map((r) => r.Proof)).toEqual([
      "Holder cache",
      "Holder growth",
      "Public-stats cache",
      "Token distribution",
      "Mint authorities",
      "Snapshot jobs rollup",
      "Transaction sync",
    ]);
    expect(html).toContain('href="/api/public/holder-cache-freshness.csv"');
    // Percentiles, not averages: 1..100 ms → p50 50, p95 95, p99 99, each shown as the middle of its latency bucket
    // (within 9.05 %): 50 ms lies in (46.3, 55.1] ms → ≈ 51 ms; 95 and 99 ms in (92.7, 110.2] ms → ≈ 101 ms.
    expect(factsOf(html, "latency")).toMatchObject({ p50: "≈ 51 ms", p95: "≈ 101 ms", p99: "≈ 101 ms" });
    expect(html).toContain("No incidents in the last 14 days.");
    expect(html).not.toContain('id="active-incidents"');
    expect(html).toContain('href="/status/feed.rss"');
    expect(html).toContain('href="/status/feed.json"');
  });

  test("not configured (no TOKEN_MINT): grey and labelled, its component too, no uptime claimed; configured checks read OK", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const html = await (await h.request("/status")).text();
    expect(rowById(html, "check-freshness_holder_cache")).toMatchObject({
      Check: "freshness_holder_cache",
      Status: "NOT CONFIGURED",
      Details: expect.stringMatching(/^not configured: TOKEN_MINT is not set/),
      "Uptime 90 d": "90 d: —",
    });
    for (const check of ["freshness_holder_cache", "chain_rpc", "mint_authority"]) expect(classOf(html, `check-${check}`)).toBe("row-not-configured");
    expect(textById(html, "component-chain_data")).toStartWith("Chain data NOT CONFIGURED ");
    expect(barsOf(html, "Chain data").at(-1)).toEqual({ title: "2026-03-01: not configured", colour: "none", old: false });
    expect(rowById(html, "check-database")).toMatchObject({ Check: "database", Status: "OK" });
    expect(classOf(html, "check-database")).toBe("row-ok");
    expect(html).not.toContain(">not_configured");
  });

  test("a bad check: the headline says outage, its row says BAD with the reason and is shown open; incidents are listed, escaped", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    await breakDatabase(h);
    await insertIncident(h, iso(T0, -30), null, "bad", { database: "bad" }, { database: "migrations behind <script>alert(1)</script> & more" });
    await insertIncident(h, iso(T0, -3000), iso(T0, -2990), "warn", { jobs: "warn" }, { jobs: "stale: status-snapshot" });
    const html = await (await h.request("/status")).text();
    expect(titleOf(html)).toBe("Herald status: BAD");
    expect(html).toContain("Outage: at least one check is failing");
    expect(rowById(html, "check-database")).toMatchObject({
      Check: "database",
      Status: "BAD",
      Details: expect.stringMatching(/^migrations behind: \d+\/\d+ applied$/),
    });
    expect(classOf(html, "check-database")).toBe("row-bad");
    expect(elementById(html, "component-api")).toContain("<details open>");
    expect(elementById(elementById(html, "active-incidents")!, "incident-1")).not.toBeNull();
    expect(textById(html, "incident-1")).toStartWith("BAD Outage: database ");
    expect(textById(html, "incident-2")).toStartWith("WARN Resolved: Degraded service: jobs ");
    expect(html).toContain("migrations behind &lt;script&gt;alert(1)&lt;/script&gt; &amp; more");
    expect(html).not.toContain("<script>alert(1)");
  });

  test("an open operator incident: its updates newest first, escaped; it drives the headline and its component while the checks are green", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const admin = operator(h, await createAdminToken(h));
    h.clock.set(iso(T0, -20));
    const id = (
      await admin.post("/admin/status/incidents", { title: "Webhooks <late>", message: "Looking & checking.", severity: "warn", components: ["webhooks"] })
    ).body.incident.id;
    h.clock.set(iso(T0, -5));
    await admin.post(`/admin/status/incidents/${id}/updates`, { state: "identified", message: 'A stuck "receiver".' });
    h.clock.set(T0);
    const html = await (await h.request("/status")).text();
    expect(titleOf(html)).toBe("Herald status: WARN");
    expect(html).toContain("Degraded service reported: Webhooks &lt;late&gt;");
    expect(textById(html, "component-webhooks")).toStartWith("Webhooks WARN ");
    expect(updatesOf(html, `incident-${id}`)).toEqual([
      'identified 2026-03-01 11:55 UTC A stuck "receiver".',
      "investigating 2026-03-01 11:40 UTC Looking & checking.",
    ]);
    expect(html).toContain("A stuck &quot;receiver&quot;.");
    expect(html).toContain("Reported by the operators · started");
  });

  test("uptime since monitoring began: windows that reach back before the first snapshot say since when", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    // Monitoring began 3 days ago; one snapshot a minute, warn for the first hour of it.
    const began = iso(T0, -3 * 1440);
    for (let m = 0; m < 3 * 1440; m++) await insertSnapshot(h, iso(began, m), m < 60 ? "warn" : "ok", m < 60 ? { jobs: "warn" } : {});
    const html = await (await h.request("/status")).text();
    // 24 h: all ok, full window. 7/30/90 d: 60 of 4320 minutes degraded = 98.61 %, since 2026-02-26 12:00 UTC.
    const since = "98.61% since 2026-02-26 12:00 UTC";
    expect(factsOf(html, "uptime")).toEqual({ "24 h": "100%", "7 d": since, "30 d": since, "90 d": since });
    expect(textById(html, "uptime")).toContain("98.61% uptime since 2026-02-26 12:00 UTC");
  });

  test("bars colour each day from the stored snapshots; maintenance is shown", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    // Yesterday: a snapshot every minute all day (1440 min observed), warn for the first 30 minutes.
    const day = "2026-02-28T00:00:00.000Z";
    for (let m = 0; m < 1440; m += 1) await insertSnapshot(h, iso(day, m), m < 30 ? "warn" : "ok", m < 30 ? { webhooks: "warn" } : {});
    // Today: bad from 00:00 to 01:00 then ok until now (12:00) → 60 of 720 minutes = 8.33 % ≥ 5 % → red
    for (let m = 0; m < 720; m += 1) await insertSnapshot(h, iso("2026-03-01T00:00:00.000Z", m), m < 60 ? "bad" : "ok", m < 60 ? { database: "bad" } : {});
    const token = await createAdminToken(h);
    const w = await operator(h, token).post("/admin/status/maintenance", { starts_at: iso(T0, 60), ends_at: iso(T0, 120), title: "Disk <swap>" });
    expect(w.status).toBe(201);
    const html = await (await h.request("/status")).text();
    // yesterday: 30 / 1440 = 2.083 % degraded → amber, 97.92 % up
    expect(barsOf(html, "Overall").slice(-2)).toEqual([
      { title: "2026-02-28: 97.92% up", colour: "warn", old: false },
      { title: "2026-03-01: 91.67% up", colour: "bad", old: false },
    ]);
    // per component: webhooks only yesterday, the API (database) only today
    const none88 = Array(88).fill("none");
    expect(barsOf(html, "Webhooks").map((b) => b.colour)).toEqual([...none88, "warn", "ok"]);
    expect(barsOf(html, "API").map((b) => b.colour)).toEqual([...none88, "ok", "bad"]);
    expect(textById(html, "maintenance")).toStartWith("Maintenance PLANNED Disk <swap> ");
    expect(html).toContain("Disk &lt;swap&gt;");
  });
});

describe("GET /status/feed.rss", () => {
  test("valid RSS 2.0 that a real parser reads: one item per incident, stable guid, RFC 822 dates", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    await insertIncident(h, iso(T0, -120), iso(T0, -60), "bad", { chain_rpc: "bad" }, { chain_rpc: "no usable RPC URL <&> \u0001 (1 configured)" });
    await insertIncident(h, iso(T0, -10), null, "warn", { jobs: "warn", webhooks: "warn" }, { jobs: "stale: x", webhooks: "5 pending" });
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
    h = await openTestApp({ clock: new FakeClock(T0) });
    const feed = await new Parser().parseString(await (await h.request("/status/feed.rss")).text());
    expect(feed.items).toEqual([]);
    expect(feed.title).toBe("Herald status: incidents");
  });
});

describe("GET /status/feed.json (JSON Feed 1.1)", () => {
  const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

  test("the fields JSON Feed 1.1 requires and the ones readers use; operator updates in the text; the same items as the RSS", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    await insertIncident(h, iso(T0, -120), iso(T0, -60), "bad", { chain_rpc: "bad" }, { chain_rpc: "no usable RPC URL <&> (1 configured)" });
    const admin = operator(h, await createAdminToken(h));
    h.clock.set(iso(T0, -30));
    const id = (await admin.post("/admin/status/incidents", { title: 'Slow "answers"', message: "Looking.", severity: "warn", components: ["api"] })).body
      .incident.id;
    h.clock.set(iso(T0, -10));
    await admin.post(`/admin/status/incidents/${id}/updates`, { state: "monitoring", message: "Fixed; watching." });
    h.clock.set(T0);
    const res = await h.request("/status/feed.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/feed+json; charset=utf-8");
    const feed = JSON.parse(await res.text());
    // Required by https://jsonfeed.org/version/1.1: version, title, items; each item an id (string) and content.
    expect(feed.version).toBe("https://jsonfeed.org/version/1.1");
    expect(typeof feed.title).toBe("string");
    expect(Array.isArray(feed.items)).toBe(true);
    expect(feed.home_page_url).toBe("http://localhost:3000/status");
    expect(feed.feed_url).toBe("http://localhost:3000/status/feed.json");
    expect(feed.authors).toEqual([{ name: "Herald operators", url: "http://localhost:3000/status" }]);
    expect(feed.items).toHaveLength(2);
    for (const item of feed.items) {
      expect(typeof item.id).toBe("string");
      expect(typeof item.content_text === "string" || typeof item.content_html === "string").toBe(true);
      expect(item.date_published).toMatch(RFC3339);
      expect(item.date_modified).toMatch(RFC3339);
      expect(new URL(item.url).origin).toBe("http://localhost:3000");
      // Extensions must start with an underscore; nothing else outside the spec's item fields.
      for (const key of Object.keys(item)) expect(["id", "url", "title", "content_text", "date_published", "date_modified", "tags", "_herald"]).toContain(key);
    }
    const [op, auto] = feed.items;
    expect(op).toMatchObject({
      id: `herald-incident-${id}`,
      title: '[Ongoing] Slow "answers"',
      date_published: iso(T0, -30),
      date_modified: iso(T0, -10),
      tags: ["operator", "warn", "open", "api"],
    });
    expect(op._herald).toEqual({
      source: "operator",
      status: "open",
      state: "monitoring",
      severity: "warn",
      components: ["api"],
      started_at: iso(T0, -30),
      ended_at: null,
    });
    expect(op.content_text).toContain(`${iso(T0, -10)} monitoring: Fixed; watching.`);
    expect(op.content_text).toContain(`${iso(T0, -30)} investigating: Looking.`);
    expect(auto).toMatchObject({ id: "herald-incident-1", title: "[Resolved] Outage: chain_rpc" });
    expect(auto.content_text).toContain("no usable RPC URL <&>");
    // The RSS lists the same incidents under the same ids.
    const rss = await new Parser().parseString(await (await h.request("/status/feed.rss")).text());
    expect(rss.items.map((i) => i.guid)).toEqual(feed.items.map((i: { id: string }) => i.id));
    expect(rss.items[0]!.content).toContain("monitoring: Fixed; watching.");
  });

  test("no incidents: a valid feed with no items", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const feed = JSON.parse(await (await h.request("/status/feed.json")).text());
    expect(feed).toMatchObject({ version: "https://jsonfeed.org/version/1.1", items: [] });
  });
});

describe("GET /status/badge/{check}.svg", () => {
  async function lastHour(h: TestApp) {
    // The last 60 minutes, a snapshot a minute; warn (chain_rpc) for 3 of them → 3 / 60 = 5 % degraded, 95 % up.
    for (let m = 0; m < 60; m++) await insertSnapshot(h, iso(T0, m - 60), m < 3 ? "warn" : "ok", m < 3 ? { chain_rpc: "warn" } : {});
  }

  test("overall and per check uptime, coloured by the steps; the window picks the period", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    await lastHour(h);
    const res = await h.request("/status/badge/overall.svg");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    const svg = await res.text();
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('aria-label="uptime 24h: 95%"');
    expect(svg).toContain('fill="#dfb317"'); // ≥ 95 % → yellow
    const rpc = await (await h.request("/status/badge/chain_rpc.svg?window=7d")).text();
    expect(titleOf(rpc)).toBe("chain_rpc 7d: 95%");
    const db = await (await h.request("/status/badge/database.svg?window=90d")).text();
    expect(titleOf(db)).toBe("database 90d: 100%");
    expect(db).toContain('fill="#4c1"');
  });

  test("no snapshots: no data, grey", async () => {
    h = await openTestApp({ clock: new FakeClock(T0) });
    const svg = await (await h.request("/status/badge/jobs.svg?window=30d")).text();
    expect(titleOf(svg)).toBe("jobs 30d: no data");
    expect(svg).toContain('fill="#9f9f9f"');
  });

  test("an unknown check is a JSON 404; a bad window or file name is a 400", async () => {
    h = await openTestApp();
    const unknown = await h.json("/status/badge/nonsense.svg");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("not_found");
    for (const path of ["/status/badge/overall.svg?window=1y", "/status/badge/overall.png", "/status/badge/Overall.svg", "/status/badge/..%2Fx.svg"]) {
      const r = await h.json(path);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_query");
    }
    // A path parameter is named path.<name>, as on every route.
    const file = await h.json("/status/badge/overall.png");
    expect(file.body.details.map((d: { field: string }) => d.field)).toEqual(["path.badge"]);
    expect(file.body.message).toStartWith("Invalid request parameters: path.badge must match");
  });
});
