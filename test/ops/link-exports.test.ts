import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { parse } from "csv-parse/sync";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { plantAlertRun } from "./support";
import { BROWSER_ACCEPT } from "../support/console";

// The link-inbox event exports over planted ops_link_events rows (the notifier is not involved): every filter,
// the CSV twin, checksum, compress, count_only, fields, the window presets, the download-token flow and telemetry.
const NOW = "2026-04-01T12:00:00.000Z";
const BASE = "/admin/ops/link-inbox/events";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

async function setup() {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  const token = await createAdminToken(h, "alice");
  const auth = { authorization: `Bearer ${token}` };
  const raw = (path: string, headers: Record<string, string> = {}) => h.request(path, { headers: { ...auth, ...headers } });
  const get = async (path: string) => {
    const res = await raw(path);
    return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
  };
  return { auth, raw, get };
}

const ev = (
  at: string,
  event: string,
  issue: string,
  target: string,
  o: { url?: string | null; code?: number; family?: string; skip?: string; error?: string },
) =>
  h.ctx.store.run(
    "INSERT INTO ops_link_events (at, event, issue_id, target, url, attempt, status_code, status_code_family, skip_reason, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [at, event, issue, target, o.url ?? null, o.skip ? 0 : 1, o.code ?? null, o.family ?? null, o.skip ?? null, o.error ?? null],
  );

/** Eight events over a morning, ids 1…8 in time order. */
async function plant() {
  await ev("2026-04-01T08:00:00.000Z", "incident.opened", "incident:1", "slack", { url: "https://hooks.slack.com/services/T***", code: 200, family: "2xx" });
  await ev("2026-04-01T08:05:00.000Z", "incident.opened", "incident:1", "discord", {
    url: "https://discord.com/api/webhooks/***",
    code: 500,
    family: "5xx",
    error: "HTTP 500",
  });
  await ev("2026-04-01T08:10:00.000Z", "incident.updated", "incident:1", "slack", { skip: "cooldown" });
  await ev("2026-04-01T09:00:00.000Z", "alert.fired", "alert:digest", "slack", { url: "https://hooks.slack.com/services/T***", code: 404, family: "4xx" });
  await ev("2026-04-01T09:30:00.000Z", "preflight.anomaly", "preflight:token", "discord", {
    url: "https://discord.com/api/webhooks/***",
    family: "timeout",
    error: "timeout",
  });
  await ev("2026-04-01T10:00:00.000Z", "incident.resolved", "incident:1", "slack", { url: "https://hooks.slack.com/services/T***", code: 204, family: "2xx" });
  await ev("2026-04-01T10:30:00.000Z", "alert.fired", "alert:x", "none", { skip: "no_url" });
  await ev("2026-04-01T11:00:00.000Z", "incident.opened", "incident:2", "discord", { url: "https://discord.com/api/webhooks/***", code: 302, family: "other" });
}

const ids = (b: Record<string, any>) => (b.events as Array<{ id: number }>).map((e) => e.id);

describe("filters", () => {
  test("each filter selects exactly the planted rows, newest first", async () => {
    const { get } = await setup();
    await plant();
    const cases: Array<[string, number[]]> = [
      ["", [8, 7, 6, 5, 4, 3, 2, 1]],
      ["event=incident.opened", [8, 2, 1]],
      ["event=incident.opened&event=alert.fired", [8, 7, 4, 2, 1]],
      ["event=incident.opened,alert.fired", [8, 7, 4, 2, 1]],
      ["event_prefix=incident.", [8, 6, 3, 2, 1]],
      ["at_from=2026-04-01T09:00:00Z", [8, 7, 6, 5, 4]],
      ["at_to=2026-04-01T09:00:00Z", [3, 2, 1]],
      ["at_from=2026-04-01T08:05:00Z&at_to=2026-04-01T10:00:00Z", [5, 4, 3, 2]],
      ["status_code_family=2xx", [6, 1]],
      ["status_code_family=4xx,5xx,timeout", [5, 4, 2]],
      ["status_code_family=other", [8]],
      ["skip_reason=cooldown", [3]],
      ["skip_reason=no_url&skip_reason=other", [7]],
      ["issue_id=incident:1", [6, 3, 2, 1]],
      ["url_contains=discord.com", [8, 5, 2]],
      ["event=incident.opened&status_code_family=2xx&url_contains=slack", [1]],
      ["limit=2", [8, 7]],
    ];
    for (const [q, want] of cases) {
      const res = await get(`${BASE}/export.json?${q}`);
      expect({ q, status: res.status, ids: ids(res.body) }).toEqual({ q, status: 200, ids: want });
    }
    const limited = await get(`${BASE}/export.json?limit=2`);
    expect(limited.body).toMatchObject({ total: 8, count: 2, truncated: true });
  });

  test("fields picks columns in the given order; CSV is the JSON's twin", async () => {
    const { get, raw } = await setup();
    await plant();
    const j = await get(`${BASE}/export.json?fields=id,event,status_code&event_prefix=incident.`);
    expect(j.body.fields).toEqual(["id", "event", "status_code"]);
    expect(j.body.events[0]).toEqual({ id: 8, event: "incident.opened", status_code: 302 });
    for (const q of ["", "fields=id,event,status_code&event_prefix=incident.", "skip_reason=cooldown,no_url"]) {
      const json = await get(`${BASE}/export.json?${q}`);
      const res = await raw(`${BASE}/export.csv?${q}`);
      expect(res.headers.get("content-type")).toContain("text/csv");
      const rows = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
      const asText = (json.body.events as Array<Record<string, unknown>>).map((e) =>
        Object.fromEntries(Object.entries(e).map(([k, v]) => [k, v === null ? "" : String(v)])),
      );
      expect(rows).toEqual(asText);
    }
  });

  test("count_only gives the count alone, in JSON and CSV", async () => {
    const { get, raw } = await setup();
    await plant();
    const j = await get(`${BASE}/export.json?count_only=1&status_code_family=2xx`);
    expect(j.body).toMatchObject({ total: 2, count: 2 });
    expect(j.body.events).toBeUndefined();
    expect(await (await raw(`${BASE}/export.csv?count_only=1`)).text()).toBe("count\r\n8\r\n");
  });

  test("debug explains the filters in words with timings, and no SQL", async () => {
    const { get } = await setup();
    await plant();
    const j = await get(`${BASE}/export.json?debug=1&event=alert.fired&url_contains=slack`);
    expect(j.body.debug.explanation).toEqual([
      "event is one of alert.fired",
      'url contains "slack" (case-sensitive)',
      "newest first, at most 1000 rows; 1 match",
    ]);
    expect(Object.keys(j.body.debug.timings_ms)).toEqual(["resolve", "count", "rows"]);
    expect(JSON.stringify(j.body.debug)).not.toMatch(/SELECT|WHERE/);
  });
});

describe("window presets", () => {
  test("last_outage is the latest resolved outage (a bad incident), else the latest resolved incident; none → empty with a note", async () => {
    const { get } = await setup();
    await plant();
    const none = await get(`${BASE}/export.json?window_preset=last_outage`);
    expect(none.body).toMatchObject({ total: 0, events: [], window: { preset: "last_outage", from: null, to: null } });
    expect(none.body.window.note).toContain("no resolved status incident");
    const ins = (...args: Array<string | null>) =>
      h.ctx.store.run(
        "INSERT INTO status_incidents (source, started_at, ended_at, severity, current_severity, checks, summary, updated_at) VALUES ('automatic', ?, ?, 'bad', 'bad', '{}', '{}', ?)",
        args,
      );
    await ins("2026-04-01T07:00:00.000Z", "2026-04-01T07:30:00.000Z", NOW);
    await ins("2026-04-01T08:04:00.000Z", "2026-04-01T09:10:00.000Z", NOW);
    await ins("2026-04-01T10:45:00.000Z", null, NOW); // still open: not an outage window yet
    const w = await get(`${BASE}/export.json?window_preset=last_outage`);
    expect(w.body.window).toMatchObject({ preset: "last_outage", from: "2026-04-01T08:04:00.000Z", to: "2026-04-01T09:10:00.000Z" });
    expect(ids(w.body)).toEqual([4, 3, 2]);
    // Intersected with at_from.
    expect(ids((await get(`${BASE}/export.json?window_preset=last_outage&at_from=2026-04-01T08:30:00Z`)).body)).toEqual([4]);
    // A later resolved incident that was only degraded (warn) is not an outage: the window stays on the bad one.
    await h.ctx.store.run(
      "INSERT INTO status_incidents (source, started_at, ended_at, severity, current_severity, checks, summary, updated_at) VALUES ('automatic', ?, ?, 'warn', 'warn', '{}', '{}', ?)",
      ["2026-04-01T09:20:00.000Z", "2026-04-01T09:40:00.000Z", NOW],
    );
    expect((await get(`${BASE}/export.json?window_preset=last_outage`)).body.window).toMatchObject({ from: "2026-04-01T08:04:00.000Z" });
    // With no bad incident at all, the latest resolved one of any severity.
    await h.ctx.store.run("UPDATE status_incidents SET severity = 'warn', current_severity = 'warn'");
    expect((await get(`${BASE}/export.json?window_preset=last_outage`)).body.window).toMatchObject({
      from: "2026-04-01T09:20:00.000Z",
      to: "2026-04-01T09:40:00.000Z",
    });
  });

  test("last_digest_warn spans the latest digest warning streak until the run that cleared it", async () => {
    const { get } = await setup();
    await plant();
    const none = await get(`${BASE}/export.json?window_preset=last_digest_warn`);
    expect(none.body.total).toBe(0);
    expect(none.body.window.note).toContain("no 403-digest warning");
    const run = (runId: string, at: string, status: string) => plantAlertRun(h.ctx.store, { runId, at, source: "digest", name: "403-digest", status });
    await run("r1", "2026-04-01T07:00:00.000Z", "warn");
    await run("r2", "2026-04-01T07:30:00.000Z", "ok");
    await run("r3", "2026-04-01T08:30:00.000Z", "warn");
    await run("r4", "2026-04-01T09:15:00.000Z", "warn");
    await run("r5", "2026-04-01T10:15:00.000Z", "ok");
    const w = await get(`${BASE}/export.json?window_preset=last_digest_warn`);
    expect(w.body.window).toMatchObject({ from: "2026-04-01T08:30:00.000Z", to: "2026-04-01T10:15:00.000Z" });
    expect(ids(w.body)).toEqual([6, 5, 4]);
  });
});

describe("checksum and compress", () => {
  const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

  test("X-Export-SHA256 is the sha256 of the bytes sent, and Accept-Encoding does not re-encode them", async () => {
    const { raw } = await setup();
    await plant();
    for (let i = 0; i < 20; i++)
      await ev(`2026-04-01T07:${String(i).padStart(2, "0")}:00.000Z`, "alert.fired", `alert:${i}`, "slack", { code: 200, family: "2xx" });
    for (const path of [`${BASE}/export.json?checksum=1`, `${BASE}/export.csv?checksum=1`]) {
      const res = await raw(path, { "accept-encoding": "gzip, br" });
      expect(res.headers.get("content-encoding")).toBeNull();
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect(bytes.byteLength).toBeGreaterThan(1024);
      expect(res.headers.get("x-export-sha256")).toBe(sha(bytes));
    }
    // Without checksum the core compresses as for any route.
    expect((await raw(`${BASE}/export.json`, { "accept-encoding": "gzip" })).headers.get("content-encoding")).toBe("gzip");
  });

  test("compress=1 gunzips to the plain body; compressed once, whatever Accept-Encoding says; checksum of the gzip bytes", async () => {
    const { raw } = await setup();
    await plant();
    for (const fmt of ["json", "csv"]) {
      const plain = new Uint8Array(await (await raw(`${BASE}/export.${fmt}?fields=id,event`)).arrayBuffer());
      const res = await raw(`${BASE}/export.${fmt}?fields=id,event&compress=1&checksum=1`, { "accept-encoding": "br, gzip" });
      expect(res.headers.get("content-encoding")).toBe("gzip");
      const gz = new Uint8Array(await res.arrayBuffer());
      expect(res.headers.get("x-export-sha256")).toBe(sha(gz));
      const text = new TextDecoder().decode(gunzipSync(gz));
      if (fmt === "csv") expect(text).toBe(new TextDecoder().decode(plain));
      else expect({ ...JSON.parse(text), generated_at: 0 }).toEqual({ ...JSON.parse(new TextDecoder().decode(plain)), generated_at: 0 });
    }
  });
});

describe("bad input", () => {
  test("unknown values and bad ranges are 400 invalid_query naming the parameter; never a 500", async () => {
    const { get } = await setup();
    const cases: Array<[string, string]> = [
      ["event=incident.exploded", "query.event"],
      ["event=incident.opened,nope", "query.event"],
      ["status_code_family=3xx", "query.status_code_family"],
      ["skip_reason=bored", "query.skip_reason"],
      ["fields=id,password", "query.fields"],
      ["window_preset=yesterday", "query.window_preset"],
      ["at_from=yesterday", "query.at_from"],
      ["at_from=2026-04-01T10:00:00Z&at_to=2026-04-01T09:00:00Z", "query.at_to"],
      ["at_from=2026-04-01T10:00:00Z&at_to=2026-04-01T10:00:00Z", "query.at_to"],
      [`url_contains=${"x".repeat(201)}`, "query.url_contains"],
      ["limit=0", "query.limit"],
      ["limit=50001", "query.limit"],
      ["limit=1.5", "query.limit"],
      ["download_token=1&count_only=1", "query.download_token"],
    ];
    for (const [q, field] of cases) {
      for (const fmt of ["json", "csv"]) {
        const res = await get(`${BASE}/export.${fmt}?${q}`);
        expect({ q, status: res.status, error: res.body.error, field: res.body.details?.[0]?.field }).toEqual({
          q,
          status: 400,
          error: "invalid_query",
          field,
        });
      }
    }
    expect((await get(`${BASE}/export.json?limit=50000`)).status).toBe(200);
  });

  test("every route is 403 without credentials, and the page redirects to sign-in", async () => {
    await setup();
    for (const p of [`${BASE}/export.json`, `${BASE}/export.csv`, `${BASE}/export-download.csv?download_token=x`, `${BASE}/export-telemetry.json`]) {
      const res = await h.request(p);
      expect({ p, status: res.status }).toEqual({ p, status: 403 });
    }
    const page = await h.request("/admin/ops/link-inbox", { headers: { accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/admin/sign-in?next=%2Fadmin%2Fops%2Flink-inbox");
  });
});

describe("download tokens", () => {
  test("issue → download once (checksummed CSV) → used 410 → expired 410 → another operator 403", async () => {
    const { get, raw } = await setup();
    await plant();
    const issued = await get(`${BASE}/export.csv?download_token=1&event=incident.opened&fields=id,event`);
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({
      success: true,
      requested_by: expect.stringMatching(/^admin:alice#\d+$/),
      params: { event: ["incident.opened"], fields: ["id", "event"] },
    });
    expect(issued.body.expires_at).toBe("2026-04-01T12:10:00.000Z");
    const token = issued.body.download_token as string;
    expect(token).toMatch(/^hdt_[A-Za-z0-9_-]{43}$/);
    const stored = await h.ctx.store.all<Record<string, string | null>>("SELECT token_hash, export, used_at FROM ops_download_tokens");
    expect(stored).toEqual([
      { token_hash: createHash("sha256").update(token).digest("hex"), export: "/admin/ops/link-inbox/events/export.csv", used_at: null },
    ]);

    // Another operator: 403, and the token stays usable for its owner.
    const bob = { authorization: `Bearer ${await createAdminToken(h, "bob")}` };
    const other = await h.request(issued.body.download_url, { headers: bob });
    expect(other.status).toBe(403);

    const first = await raw(issued.body.download_url);
    expect(first.status).toBe(200);
    const body = new Uint8Array(await first.arrayBuffer());
    expect(first.headers.get("x-export-sha256")).toBe(createHash("sha256").update(body).digest("hex"));
    expect(new TextDecoder().decode(body)).toBe("id,event\r\n8,incident.opened\r\n2,incident.opened\r\n1,incident.opened\r\n");
    const usage = await h.ctx.store.all("SELECT export, bytes, source FROM ops_export_usage WHERE source = 'token'");
    expect(usage).toEqual([{ export: "/admin/ops/link-inbox/events/export-download.csv", bytes: body.byteLength, source: "token" }]);

    const again = await get(issued.body.download_url);
    expect(again).toMatchObject({ status: 410, body: { error: "download_token_used" } });

    const late = await get(`${BASE}/export.json?download_token=1`);
    h.clock.advance(600_000);
    expect(await get(late.body.download_url)).toMatchObject({ status: 410, body: { error: "download_token_expired" } });
    expect((await get(`${BASE}/export-download.csv?download_token=hdt_nope`)).status).toBe(404);
  });
});

describe("telemetry", () => {
  test("tokens requested, used and expired, and export bytes, per operator; requested_by filters", async () => {
    const { get, raw } = await setup();
    await plant();
    const a = await get(`${BASE}/export.json?download_token=1`);
    expect((await raw(a.body.download_url)).status).toBe(200);
    await get(`${BASE}/export.json?download_token=1`); // will expire
    h.clock.advance(601_000);
    await get(`${BASE}/export.json?download_token=1`); // pending
    const me = a.body.requested_by as string;
    const usage = (...args: Array<string | number>) =>
      h.ctx.store.run("INSERT INTO ops_export_usage (at, actor, export, bytes, source) VALUES (?, ?, ?, ?, 'export')", args);
    await usage(NOW, "admin:carol#99", "/admin/ops/link-inbox/events/export.json", 1000);
    await usage(NOW, "admin:carol#99", "/admin/ops/link-inbox/events/export.csv", 500);
    await usage(NOW, "admin:carol#99", "/admin/ops/alerts-monitor/export.json", 7777); // not a link-inbox export

    const carol = await get(`${BASE}/export-telemetry.json?requested_by=admin:carol%2399`);
    expect(carol.body).toMatchObject({
      requested_by: "admin:carol#99",
      exports: { downloads: 2, bytes: 1500, by_source: { export: { downloads: 2, bytes: 1500 } } },
      download_tokens: { requested: 0, used: 0, expired: 0, pending: 0 },
      by_actor: [{ actor: "admin:carol#99", downloads: 2, bytes: 1500, tokens_requested: 0 }],
    });
    const mine = await get(`${BASE}/export-telemetry.json?requested_by=${encodeURIComponent(me)}`);
    expect(mine.body.download_tokens).toEqual({ requested: 3, used: 1, expired: 1, pending: 1 });
    expect(mine.body.exports.by_source.token.downloads).toBe(1);
    const all = await get(`${BASE}/export-telemetry.json`);
    expect(all.body.by_actor.map((x: { actor: string }) => x.actor)).toEqual([me, "admin:carol#99"]);
  });
});
