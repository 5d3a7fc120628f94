import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { preflightSnapshotJob } from "../../src/ops/preflight/alerts";
import { openTestApp, type TestApp } from "../support/app";
import { freshPostgresDatabase, testEngine } from "../support/engine";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";

// Preflight guards over simulated days: one app per day over the SAME database, each with the configuration of
// that day, each taking the day's snapshot through the job (a manual run). The responder changes planted per day
// give the daily change counts 1, 0, 1, 0, 1, 4 (days 1–6), against which the detector is checked by hand.

setDefaultTimeout(60_000);

const START = "2026-04-01T10:00:00.000Z";
const DAY_MS = 86_400_000;
const day = (k: number) => new Date(Date.parse(START) + k * DAY_MS).toISOString().slice(0, 10);

// Secrets that must never appear in any answer.
const SIGNING_KEY = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e7abcd";
const RPC_KEY = "rpcapikeyZZtopsecret991";
const BASE_ENV = { AUDIO_SHARE_SIGNING_KEY: SIGNING_KEY, SOLANA_RPC_URLS: `http://127.0.0.1:8899/?api-key=${RPC_KEY}` };
const DAYS: Array<Record<string, string>> = [
  {},
  { WEBHOOK_TIMEOUT_SECONDS: "11" },
  { WEBHOOK_TIMEOUT_SECONDS: "11" },
  { WEBHOOK_TIMEOUT_SECONDS: "12" },
  { WEBHOOK_TIMEOUT_SECONDS: "12" },
  { WEBHOOK_TIMEOUT_SECONDS: "13" },
  { WEBHOOK_TIMEOUT_SECONDS: "14", WEBHOOK_MAX_ATTEMPTS: "3", WEBHOOK_CONCURRENCY: "4", WEBHOOK_RETENTION_DAYS: "9" },
];

const BASE = "/admin/ops/preflight-guards";
const ROUTES = [
  `${BASE}.json`,
  `${BASE}/export.csv`,
  `${BASE}/delta.json`,
  `${BASE}/delta.csv`,
  `${BASE}/delta.summary.json`,
  `${BASE}/history.json`,
  `${BASE}/history.csv`,
  `${BASE}/anomalies.json`,
  `${BASE}/anomalies.csv`,
];

const dbDir = mkdtempSync(join(tmpdir(), "herald-preflight-"));
const clock = new FakeClock(START);
let h: TestApp;
let auth: Record<string, string>;
const bodies: string[] = [];

/** On PostgreSQL the apps share one database made here (DATABASE_URL wins over the fresh one openTestApp makes). */
let shared: { url: string; drop(): Promise<void> } | null = null;
const appFor = (env: Record<string, string>) =>
  openTestApp({ clock, env: { HERALD_DB_PATH: join(dbDir, "herald.db"), ...(shared ? { DATABASE_URL: shared.url } : {}), ...BASE_ENV, ...env } });

async function raw(path: string, headers: Record<string, string> = {}) {
  const res = await h.request(path, { headers: { ...auth, ...headers } });
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, text, headers: res.headers };
}
async function get(path: string) {
  const r = await raw(path);
  return { ...r, body: r.text ? JSON.parse(r.text) : null };
}

beforeAll(async () => {
  if (testEngine() === "postgres") shared = await freshPostgresDatabase();
  for (let k = 0; k < DAYS.length; k++) {
    if (k > 0) clock.advance(DAY_MS);
    const app = await appFor(DAYS[k]!);
    const run = await app.ctx.jobs.runNow("preflight-snapshot");
    expect(run.error).toBeNull();
    if (k < DAYS.length - 1) await app.close();
    else h = app;
  }
  auth = { authorization: `Bearer ${await createAdminToken(h)}` };
});
afterAll(async () => {
  await h.close();
  await shared?.drop();
  rmSync(dbDir, { recursive: true, force: true });
});

describe("snapshots", () => {
  test("one row per guard field per day; re-running a day replaces its rows", async () => {
    const count = async (d: string) => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM ops_preflight_snapshots WHERE day = ?", [d]))!.n;
    const guards = (await get(`${BASE}.json`)).body;
    expect(await count(day(6))).toBe(guards.count);
    await h.ctx.jobs.runNow("preflight-snapshot");
    expect(await count(day(6))).toBe(guards.count);
    expect(await count(day(0))).toBe(guards.count);
  });

  test("the scheduled tick snapshots only when today has none or the process started after it", async () => {
    const job = preflightSnapshotJob(h.ctx);
    expect(await job.run({ runId: null, trigger: "schedule" })).toEqual({ idle: true });
    clock.advance(DAY_MS);
    try {
      expect(await job.run({ runId: null, trigger: "schedule" })).toEqual({ idle: false });
      expect(await job.run({ runId: null, trigger: "schedule" })).toEqual({ idle: true });
    } finally {
      await h.ctx.store.run("DELETE FROM ops_preflight_snapshots WHERE day = ?", [day(7)]);
      clock.advance(-DAY_MS);
    }
  });

  test("each run records one detector evaluation per series in ops_alert_runs (source preflight)", async () => {
    const rows = await h.ctx.store.all<{ name: string; status: string; value: string }>(
      "SELECT name, status, value FROM ops_alert_runs WHERE source = 'preflight' AND details LIKE ? ORDER BY id",
      [`%"day":"${day(6)}"%`],
    );
    // An anomaly is a failing alert run (what the link inbox notifies as preflight.anomaly); the rest are ok.
    expect(rows.some((r) => r.name === "preflight_anomaly:responder" && r.status === "fail" && r.value === "4")).toBe(true);
    expect(rows.every((r) => r.status === "fail" || r.status === "ok")).toBe(true);
  });
});

describe("guards", () => {
  test("sections, secrets as set/unset with a fingerprint, env rows on request; CSV twin", async () => {
    const g = (await get(`${BASE}.json`)).body;
    expect(new Set(g.guards.map((r: { section: string }) => r.section))).toEqual(new Set(["responder", "synthetic", "digest", "token", "artifact"]));
    const byField = Object.fromEntries(g.guards.map((r: { field: string }) => [r.field, r]));
    expect(byField.WEBHOOK_TIMEOUT_SECONDS.value).toBe("14");
    expect(byField.AUDIO_SHARE_SIGNING_KEY).toMatchObject({ value: "set", secret: true });
    expect(byField.AUDIO_SHARE_SIGNING_KEY.fingerprint).toMatch(/^[0-9a-f]{12}$/);
    expect(byField.MESSENGER_BOT_TOKEN).toMatchObject({ value: "unset", fingerprint: "" });
    expect(byField.migration_last_tag.value).toMatch(/^\d{4}_/);
    // The served document's ETag; "build_failed" only while the document itself does not build.
    const doc = await h.request("/api/openapi.json");
    expect(byField.openapi_sha256.value).toBe(doc.status === 200 ? doc.headers.get("etag")!.replace(/"/g, "") : "build_failed");
    if (doc.status === 200) expect(byField.openapi_sha256.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const env = (await get(`${BASE}.json?include_env_rows=1`)).body;
    expect(env.count).toBeGreaterThan(g.count + 50);
    expect(env.guards.find((r: { field: string; section: string }) => r.section === "env" && r.field === "AUDIO_SHARE_SIGNING_KEY").value).toBe("set");
    const csv = parse((await raw(`${BASE}/export.csv?include_env_rows=1`)).text, { columns: true }) as Array<Record<string, string>>;
    expect(csv.length).toBe(env.count);
    // A value that starts like a formula (a base64url hash may start with "-") is written with one leading quote
    // (src/http/formats/csv.ts); the reader the file is for drops it.
    const cell = (text: string) => (/^'[=+\-@\t\r]/.test(text) ? text.slice(1) : text);
    expect(csv.map((r) => [r.section, r.field, cell(r.value!), r.fingerprint, r.secret === "true"])).toEqual(
      env.guards.map((r: Record<string, unknown>) => [r.section, r.field, r.value, r.fingerprint, r.secret]),
    );
  });
});

describe("delta", () => {
  test("against yesterday: the four responder changes with before/after and fingerprints", async () => {
    const d = (await get(`${BASE}/delta.json`)).body;
    expect(d).toMatchObject({ current_day: day(6), compare_day: day(5), day_offset: 1, compare_available: true });
    expect(d.counts).toMatchObject({ added: 0, removed: 0, changed: 4 });
    expect(d.changes.map((c: { field: string; before: string; after: string }) => [c.field, c.before, c.after])).toEqual([
      ["WEBHOOK_MAX_ATTEMPTS", "10", "3"],
      ["WEBHOOK_TIMEOUT_SECONDS", "13", "14"],
      ["WEBHOOK_CONCURRENCY", "16", "4"],
      ["WEBHOOK_RETENTION_DAYS", d.changes[3].before, "9"],
    ]);
    const csv = parse((await raw(`${BASE}/delta.csv`)).text, { columns: true }) as Array<Record<string, string>>;
    expect(csv).toEqual(d.changes.map((c: Record<string, string | null>) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v ?? ""]))));
  });

  test("day_offset, section, fields and presets filter; a day without snapshot is compare_available=false", async () => {
    const six = (await get(`${BASE}/delta.json?day_offset=6&fields=WEBHOOK_TIMEOUT_SECONDS`)).body;
    expect(six.changes).toEqual([expect.objectContaining({ field: "WEBHOOK_TIMEOUT_SECONDS", change: "changed", before: "15", after: "14" })]);
    expect((await get(`${BASE}/delta.json?section=token`)).body.counts.changed).toBe(0);
    expect((await get(`${BASE}/delta.json?fields_preset=synthetic_thresholds`)).body.fields).toContain("SYNTHETIC_PROBE_TIMEOUT_MS");
    const far = (await get(`${BASE}/delta.json?day_offset=30`)).body;
    expect(far).toMatchObject({ compare_available: false, changes: [] });
  });

  test("bad input is 400 invalid_query naming the parameter, never a 500", async () => {
    for (const [q, name] of [
      ["section=bogus", "query.section"],
      ["fields_preset=nope", "query.fields_preset"],
      ["fields=NOT_A_FIELD", "query.fields"],
      ["day_offset=0", "query.day_offset"],
      ["day_offset=31", "query.day_offset"],
      ["day_offset=abc", "query.day_offset"],
    ] as const) {
      for (const route of ["delta.json", "delta.csv", "delta.summary.json"]) {
        const r = await get(`${BASE}/${route}?${q}`);
        expect(r.status).toBe(400);
        expect(r.body.error).toBe("invalid_query");
        expect(r.text).toContain(name);
      }
    }
    expect((await get(`${BASE}/history.json?section=nope`)).status).toBe(400);
    expect((await get(`${BASE}/anomalies.csv?fields_preset=nope`)).status).toBe(400);
  });
});

describe("delta.summary.json", () => {
  test("include_fields_max clamps at each edge; non-numeric falls back to 200 with clamped=false", async () => {
    const cases: Array<[string, number, boolean]> = [
      ["9", 10, true],
      ["10", 10, false],
      ["500", 500, false],
      ["501", 500, true],
      ["abc", 200, false],
      ["0", 10, true],
      // Any whole number is an integer to clamp, however many digits.
      ["9007199254740993", 500, true],
      ["100000000000000000000", 500, true],
      ["-100000000000000000000", 10, true],
    ];
    for (const [q, value, clamped] of cases) {
      const r = await get(`${BASE}/delta.summary.json?include_fields=1&include_fields_max=${q}`);
      expect(r.status).toBe(200);
      expect(r.body.include_fields_max).toEqual({ requested: q, value, clamped });
    }
    expect((await get(`${BASE}/delta.summary.json`)).body.include_fields_max).toEqual({ requested: null, value: 200, clamped: false });
  });

  test("include_fields_bytes_limit: 0 disables, 250000 kept, 250001 clamped, tiny limits truncate, text is 400", async () => {
    const cases: Array<[string, number, boolean]> = [
      ["0", 0, false],
      ["250000", 250000, false],
      ["250001", 250000, true],
    ];
    for (const [q, value, clamped] of cases) {
      const r = await get(`${BASE}/delta.summary.json?include_fields=1&include_fields_bytes_limit=${q}`);
      expect(r.body.include_fields_bytes_limit).toEqual({ requested: q, value, clamped });
      expect(r.body).toMatchObject({ changes_total: 4, changes_returned: 4, changes_truncated: false });
    }
    const all = (await get(`${BASE}/delta.summary.json?include_fields=1`)).body.changes;
    const two = Buffer.byteLength(JSON.stringify(all.slice(0, 2)));
    const cut = (await get(`${BASE}/delta.summary.json?include_fields=1&include_fields_bytes_limit=${two}`)).body;
    expect(cut).toMatchObject({ changes_returned: 2, changes_truncated: true, truncated_by: "bytes" });
    expect(cut.changes).toEqual(all.slice(0, 2));
    const bad = await get(`${BASE}/delta.summary.json?include_fields_bytes_limit=abc`);
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toEqual({
      field: "query.include_fields_bytes_limit",
      problem: "must be a whole number of bytes, 0 or more (0 = no bound; above 250000 is clamped to 250000)",
    });
    expect((await get(`${BASE}/delta.summary.json?include_fields_bytes_limit=99999999999999999999`)).body.include_fields_bytes_limit).toEqual({
      requested: "99999999999999999999",
      value: 250000,
      clamped: true,
    });
    // Empty or blank (a form field left empty) is unset: no bound.
    for (const q of ["", "%20"]) {
      const r = await get(`${BASE}/delta.summary.json?include_fields=1&include_fields_bytes_limit=${q}`);
      expect([q, r.status, r.body.include_fields_bytes_limit?.value, r.body.changes_truncated]).toEqual([q, 200, 0, false]);
    }
    for (const q of ["-1", "1.5", "1e3", "0x10"]) {
      const r = await get(`${BASE}/delta.summary.json?include_fields_bytes_limit=${q}`);
      expect([q, r.status, r.body.error, r.body.details[0].field]).toEqual([q, 400, "invalid_query", "query.include_fields_bytes_limit"]);
    }
  });

  test("counts without changes by default; timestamps on request", async () => {
    const s = (await get(`${BASE}/delta.summary.json?include_compare_timestamps=1`)).body;
    expect(s.changes).toBeUndefined();
    expect(s.counts.changed).toBe(4);
    expect(s.timestamps.compare_taken_at).toBe(`${day(5)}T10:00:00.000Z`);
  });

  test("strong ETag, Last-Modified, Cache-Control; 304 on If-None-Match and on If-Modified-Since", async () => {
    const first = await raw(`${BASE}/delta.summary.json`);
    const etag = first.headers.get("etag")!;
    const lastModified = first.headers.get("last-modified")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(first.headers.get("cache-control")).toBe("private, no-cache");
    const byEtag = await raw(`${BASE}/delta.summary.json`, { "if-none-match": etag });
    expect(byEtag.status).toBe(304);
    expect(byEtag.headers.get("etag")).toBe(etag);
    expect((await raw(`${BASE}/delta.summary.json`, { "if-none-match": '"other"' })).status).toBe(200);
    expect((await raw(`${BASE}/delta.summary.json`, { "if-modified-since": lastModified })).status).toBe(304);
    const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
    expect((await raw(`${BASE}/delta.summary.json`, { "if-modified-since": earlier })).status).toBe(200);
    // Another representation (other parameters) has another tag.
    expect((await raw(`${BASE}/delta.summary.json?day_offset=2`)).headers.get("etag")).not.toBe(etag);
  });
});

describe("history", () => {
  test("per day and field: fingerprint and whether it changed against the day before; CSV twin", async () => {
    const r = (await get(`${BASE}/history.json?days=7&fields=WEBHOOK_TIMEOUT_SECONDS`)).body;
    expect(r).toMatchObject({ from: day(0), to: day(6), days: 7, count: 7 });
    expect(r.rows.map((x: { day: string; value: string; changed: boolean | null }) => [x.day, x.value, x.changed])).toEqual([
      [day(0), "15", null],
      [day(1), "11", true],
      [day(2), "11", false],
      [day(3), "12", true],
      [day(4), "12", false],
      [day(5), "13", true],
      [day(6), "14", true],
    ]);
    const csv = parse((await raw(`${BASE}/history.csv?days=7&fields=WEBHOOK_TIMEOUT_SECONDS`)).text, { columns: true }) as Array<Record<string, string>>;
    expect(csv).toEqual(r.rows.map((x: Record<string, unknown>) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, v === null ? "" : String(v)]))));
    expect((await get(`${BASE}/history.json?days=2`)).body.rows.every((x: { day: string }) => x.day >= day(5))).toBe(true);
    expect((await get(`${BASE}/history.json?days=91`)).status).toBe(400);
  });
});

describe("anomalies", () => {
  test("the z-score against a hand-computed series: counts 1,0,1,0,1 then 4", async () => {
    const r = (await get(`${BASE}/anomalies.json`)).body;
    expect(r.params).toEqual({ days: 30, baseline_days: 7, min_baseline_points: 3, zscore_threshold: 2, min_change_count: 2 });
    // Day 6: baseline days 1–5 = 1,0,1,0,1 → mean 0.6, population sd √0.24 = 0.489898, z = 3.4/0.489898 = 6.940221.
    expect(r.anomalies).toEqual([
      { day: day(6), series: "all", count: 4, baseline_points: 5, baseline_mean: 0.6, baseline_sd: 0.489898, z: 6.940221, status: "anomaly" },
      { day: day(6), series: "responder", count: 4, baseline_points: 5, baseline_mean: 0.6, baseline_sd: 0.489898, z: 6.940221, status: "anomaly" },
    ]);
    // Days 4, 5 and 6 have ≥ 3 baseline points, in each of the series that have changes.
    expect(r.evaluated).toBeGreaterThanOrEqual(6);
    expect((await get(`${BASE}/anomalies.json?min_change_count=5`)).body.count).toBe(0);
    expect((await get(`${BASE}/anomalies.json?zscore_threshold=7`)).body.count).toBe(0);
    expect((await get(`${BASE}/anomalies.json?min_baseline_points=6`)).body.count).toBe(0);
    expect((await get(`${BASE}/anomalies.json?section=token`)).body.count).toBe(0);
    const csv = parse((await raw(`${BASE}/anomalies.csv`)).text, { columns: true }) as Array<Record<string, string>>;
    expect(csv).toEqual(
      r.anomalies.map((x: Record<string, unknown>) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, v === null ? "" : String(v)]))),
    );
    // Each field is a series too (`<section>.<field>`, daily count 0 or 1): flagged only with min_change_count 1.
    expect(r.series).toEqual(expect.arrayContaining(["all", "responder", "responder.WEBHOOK_TIMEOUT_SECONDS"]));
    const perField = (await get(`${BASE}/anomalies.json?min_change_count=1`)).body.anomalies as Array<{ series: string; count: number; z: number | null }>;
    const fields = perField.filter((a) => a.series.startsWith("responder."));
    expect(fields.length).toBeGreaterThan(0);
    for (const a of fields) expect(a.count).toBe(1);
    // WEBHOOK_TIMEOUT_SECONDS changed on days 1, 3, 5 and 6: on day 6, z = (1 − 0.6) / 0.489898 = 0.816, not flagged.
    expect(fields.map((a) => a.series)).not.toContain("responder.WEBHOOK_TIMEOUT_SECONDS");
    for (const q of ["zscore_threshold=abc", "baseline_days=0", "days=0", "min_change_count=0"])
      expect((await get(`${BASE}/anomalies.json?${q}`)).status).toBe(400);
  });
});

describe("access and secrets", () => {
  test("every route is 403 without credentials and with a wrong token", async () => {
    for (const route of ROUTES) {
      for (const headers of [{}, { authorization: "Bearer not-a-token" }] as Array<Record<string, string>>) {
        const res = await h.request(route, { headers });
        expect(res.status).toBe(403);
      }
    }
  });

  test("no answer carries a secret's value", async () => {
    for (const route of ROUTES)
      await raw(`${route}${route.includes("guards.json") || route.endsWith("export.csv") ? "?include_env_rows=1" : "?day_offset=6&include_fields=1"}`);
    expect(bodies.length).toBeGreaterThan(40);
    for (const b of bodies) {
      expect(b).not.toContain(SIGNING_KEY);
      expect(b).not.toContain(RPC_KEY);
    }
  });
});
