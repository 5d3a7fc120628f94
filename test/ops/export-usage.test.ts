import { afterEach, describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { parse } from "csv-parse/sync";
import { PNG } from "pngjs";
import { recordAlertRun } from "../../src/ops/alerts/service";
import { isExportRoute } from "../../src/ops/export-usage/recorder";
import { recordExportUsage } from "../../src/ops/export-usage/service";
import { signedInCookie } from "../support/console";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";

// Export usage: real downloads through the app are counted by the recorder hook; token downloads are planted
// through recordExportUsage as the link inbox records them. Now is 2026-03-10T12:00Z.

// xml2js (a real XML parser, strict by default) ships no type declarations: typed here for what the test uses.
const { parseStringPromise } = require("xml2js") as { parseStringPromise: (xml: string) => Promise<any> };

const NOW = "2026-03-10T12:00:00.000Z";
const B = "/admin/ops/alerts-monitor";
let h: TestApp;
let auth: { authorization: string };
afterEach(async () => {
  await h?.close();
});

async function setup() {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  auth = { authorization: `Bearer ${await createAdminToken(h, "ops-alice")}` };
}

const usageRows = () =>
  h.ctx.store.all<{ at: string; actor: string; export: string; bytes: number; source: string }>(
    "SELECT at, actor, export, bytes, source FROM ops_export_usage ORDER BY id",
  );

/**
 * The recorder writes after the answer is handed back, without holding it up (src/ops/export-usage/recorder.ts):
 * its row lands a few event-loop turns later. Wait for `n` rows, a bounded number of turns, no clock involved.
 */
async function settledRows(n: number) {
  for (let i = 0; i < 200 && (await usageRows()).length < n; i++) await new Promise((r) => setImmediate(r));
  return usageRows();
}

async function plant() {
  const rows: Array<[string, string, string, number, "export" | "token"]> = [
    ["2026-03-08T09:00:00.000Z", "admin:ops-alice#1", "/admin/ops/403-digest/export.csv", 100, "export"],
    ["2026-03-08T10:00:00.000Z", "admin:ops-bob#2", "/admin/ops/403-digest/export.csv", 150, "export"],
    ["2026-03-08T11:00:00.000Z", "admin:ops-bob#2", "/admin/ops/403-digest/export.csv", 50, "export"],
    ["2026-03-10T08:00:00.000Z", "admin:ops-alice#1", "/admin/ops/link-inbox/events/export-download.csv", 700, "token"],
    ["2026-02-20T08:00:00.000Z", "admin:ops-alice#1", "/admin/ops/403-digest/export.csv", 999, "export"],
  ];
  for (const [at, actor, exp, bytes, source] of rows) await recordExportUsage(h.ctx, { at, actor, export: exp, bytes, source });
}

describe("export usage: the recorder", () => {
  test("a real download of the 403 digest's export.csv records who, which, when and the body's bytes", async () => {
    await setup();
    const res = await h.request("/admin/ops/403-digest/export.csv", { headers: auth });
    expect(res.status).toBe(200);
    const body = new Uint8Array(await res.arrayBuffer());
    const rows = await settledRows(1);
    expect(rows).toEqual([{ at: NOW, actor: "admin:ops-alice#1", export: "/admin/ops/403-digest/export.csv", bytes: body.byteLength, source: "export" }]);

    // JSON exports count the JSON body's bytes; the monitor's own exports are exports too.
    const json = await h.request("/admin/ops/403-digest/export.json", { headers: auth });
    const jsonBytes = (await json.arrayBuffer()).byteLength;
    const zip = await h.request(`${B}/export.zip`, { headers: auth });
    const zipBytes = (await zip.arrayBuffer()).byteLength;
    expect((await settledRows(3)).slice(1).map((r) => [r.export, r.bytes])).toEqual([
      ["/admin/ops/403-digest/export.json", jsonBytes],
      [`${B}/export.zip`, zipBytes],
    ]);
  });

  test("a compressed download counts the export's own bytes, not the compressed ones", async () => {
    await setup();
    for (let i = 0; i < 40; i++)
      await recordAlertRun(h.ctx, { source: "status", at: `2026-03-10T0${i % 10}:${10 + i}:00.000Z`, alerts: [{ name: "overall", status: "ok" }] });
    const res = await h.request(`${B}/runs/export`, { headers: { ...auth, "accept-encoding": "gzip" } });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    const wire = new Uint8Array(await res.arrayBuffer());
    const plain = gunzipSync(wire);
    const rows = await settledRows(1);
    expect(rows.map((r) => [r.export, r.bytes])).toEqual([[`${B}/runs/export`, plain.byteLength]]);
    expect(plain.byteLength).toBeGreaterThan(wire.byteLength);
  });

  test("a download with the operator session is counted under the admin who signed in", async () => {
    await setup();
    const token = auth.authorization.slice("Bearer ".length);
    const cookie = await signedInCookie(h, token);
    const res = await h.request(`${B}/export-usage.csv`, { headers: { cookie } });
    expect(res.status).toBe(200);
    const bytes = (await res.arrayBuffer()).byteLength;
    expect(await settledRows(1)).toEqual([{ at: NOW, actor: "admin:ops-alice#1", export: `${B}/export-usage.csv`, bytes, source: "export" }]);
  });

  test("every /admin/ops export route of the app carries the recorder, and no other route does", async () => {
    await setup();
    const routes = (h.app as unknown as { routes: Array<{ method: string; path: string; hooks: { afterHandle?: Array<{ fn: { name: string } }> } }> }).routes;
    const exports = routes.filter((r) => r.method === "GET" && isExportRoute(r.path));
    expect(exports.length).toBeGreaterThan(10);
    const missing = exports.filter((r) => !(r.hooks.afterHandle ?? []).some((x) => x.fn.name === "recordExportDownload")).map((r) => r.path);
    expect(missing).toEqual([]);
    // Scoped to the exports (src/http/hook-scope.ts): no other route's lifecycle carries it, the hot ones included.
    const carrying = routes.filter((r) => (r.hooks.afterHandle ?? []).some((x) => x.fn.name === "recordExportDownload"));
    expect(carrying.length).toBe(exports.length);
    for (const path of ["/api/salutes/credit", "/api/partner/capabilities", "/healthz", "/api/messenger/games/catalog"])
      expect(carrying.some((r) => r.path === path)).toBe(false);
    const res = await h.request("/admin/ops/preflight-guards/export.csv", { headers: auth });
    expect(res.status).toBe(200);
    const bytes = (await res.arrayBuffer()).byteLength;
    expect((await settledRows(1)).map((r) => [r.export, r.bytes])).toEqual([["/admin/ops/preflight-guards/export.csv", bytes]]);
  });

  test("link-inbox token requests and token downloads are not counted as direct exports", async () => {
    await setup();
    const issued = await h.json("/admin/ops/link-inbox/events/export.csv?download_token=1", { headers: auth });
    expect(issued.status).toBe(200);
    const download = await h.request(issued.body.download_url, { headers: auth });
    expect(download.status).toBe(200);
    await download.arrayBuffer();
    await h.request("/admin/ops/403-digest/export.csv", { headers: auth }); // a direct export, as a marker
    const rows = await settledRows(2); // the token download's row and the marker's
    expect(rows.filter((r) => r.source === "export").map((r) => r.export)).toEqual(["/admin/ops/403-digest/export.csv"]);
    // The link inbox counted its token download itself, through recordExportUsage.
    expect(rows.filter((r) => r.source === "token").map((r) => r.export)).toEqual(["/admin/ops/link-inbox/events/export-download.csv"]);
  });

  test("read-models, refusals and other routes are not counted", async () => {
    await setup();
    await h.request("/admin/ops/403-digest", { headers: auth }); // the digest itself, not an export
    await h.request("/admin/ops/403-digest/export.csv"); // 403
    await h.request("/admin/ops/403-digest/export.csv?hours=0", { headers: auth }); // 400
    await h.request("/api/public/system-status");
    expect(await settledRows(1)).toEqual([]);
    expect(isExportRoute("/admin/ops/incidents/export")).toBe(true);
    expect(isExportRoute("/admin/ops/readiness/403-noise/export.json")).toBe(true);
    expect(isExportRoute("/admin/ops/403-digest/probe-trend.png")).toBe(true);
    // The incident drafts the console offers as files (their JSON twin is a read model).
    expect([isExportRoute("/admin/ops/incidents/draft.md"), isExportRoute("/admin/ops/incidents/draft.txt")]).toEqual([true, true]);
    expect(isExportRoute("/admin/ops/incidents/draft.json")).toBe(false);
    expect(isExportRoute("/admin/ops/preflight-guards/delta.json")).toBe(false);
    expect(isExportRoute("/admin/backups/:name")).toBe(false);
  });
});

describe("export usage: json and csv", () => {
  test("per day and export: downloads, bytes, distinct actors and who they were; the CSV is the JSON's twin", async () => {
    await setup();
    await plant();
    const r = await h.json(`${B}/export-usage.json`, { headers: auth });
    expect(r.status).toBe(200);
    expect(r.body.window).toEqual({ from: "2026-03-04T00:00:00.000Z", to: NOW, days: 7 });
    expect(r.body.rows).toEqual([
      {
        day: "2026-03-08",
        export: "/admin/ops/403-digest/export.csv",
        downloads: 3,
        bytes: 300,
        actors: 2,
        operators: ["admin:ops-alice#1", "admin:ops-bob#2"],
      },
      { day: "2026-03-10", export: "/admin/ops/link-inbox/events/export-download.csv", downloads: 1, bytes: 700, actors: 1, operators: ["admin:ops-alice#1"] },
    ]);
    expect(r.body.series).toHaveLength(7);
    expect(r.body.series.find((d: any) => d.day === "2026-03-10")).toEqual({
      day: "2026-03-10",
      downloads: 1,
      export_downloads: 0,
      token_downloads: 1,
      bytes: 700,
    });
    expect(r.body.totals).toEqual({ downloads: 4, bytes: 1000, actors: 2, exports: 2 });

    const tok = await h.json(`${B}/export-usage.json?source=token&days=30`, { headers: auth });
    expect(tok.body.rows.map((x: any) => x.export)).toEqual(["/admin/ops/link-inbox/events/export-download.csv"]);
    await settledRows(5 + 2); // the planted rows and the two downloads above, recorded after their answers
    const wide = await h.json(`${B}/export-usage.json?source=export&days=30`, { headers: auth });
    // The usage exports are console exports too: the two export-usage.json downloads above were counted.
    expect(wide.body.rows.map((x: any) => [x.day, x.export, x.downloads])).toEqual([
      ["2026-02-20", "/admin/ops/403-digest/export.csv", 1],
      ["2026-03-08", "/admin/ops/403-digest/export.csv", 3],
      ["2026-03-10", `${B}/export-usage.json`, 2],
    ]);

    // Twins over source=token: each download of a usage export is itself counted (source export), so the
    // unfiltered JSON and CSV fetched one after the other differ by that one download.
    const res = await h.request(`${B}/export-usage.csv?source=token&days=30`, { headers: auth });
    expect(res.headers.get("content-type")).toContain("text/csv");
    const csv = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
    expect(
      csv.map((x) => ({ ...x, downloads: Number(x.downloads), bytes: Number(x.bytes), actors: Number(x.actors), operators: x.operators!.split(" ") })),
    ).toEqual(tok.body.rows);
    expect(csv).toHaveLength(1);
  });

  test("an unknown source, or days out of range, is a 400 naming it", async () => {
    await setup();
    for (const path of ["export-usage.json", "export-usage.csv", "export-usage.png", "export-usage.svg"]) {
      for (const [q, field] of [
        ["source=email", "query.source"],
        ["days=0", "query.days"],
        ["days=91", "query.days"],
      ]) {
        const r = await h.json(`${B}/${path}?${q}`, { headers: auth });
        expect(r.status).toBe(400);
        expect(r.body.error).toBe("invalid_query");
        expect(r.body.message).toContain(field!);
      }
    }
  });
});

describe("export usage: charts", () => {
  test("the PNG decodes at the requested size and names its series in X-Usage-Legend", async () => {
    await setup();
    await plant();
    const res = await h.request(`${B}/export-usage.png?w=640&h=300&days=14`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
    expect([png.width, png.height]).toEqual([640, 300]);
    expect(JSON.parse(res.headers.get("x-usage-legend")!)).toEqual([
      { key: "export", label: "direct downloads", color: "#4285f4" },
      { key: "token", label: "download-token downloads", color: "#f4a000" },
    ]);
    const def = PNG.sync.read(Buffer.from(await (await h.request(`${B}/export-usage.png`, { headers: auth })).arrayBuffer()));
    expect([def.width, def.height]).toEqual([800, 360]);
    for (const [w, hh] of [
      [320, 200],
      [1600, 900],
    ]) {
      const edge = PNG.sync.read(Buffer.from(await (await h.request(`${B}/export-usage.png?w=${w}&h=${hh}`, { headers: auth })).arrayBuffer()));
      expect([edge.width, edge.height]).toEqual([w!, hh!]);
    }
  });

  test("the SVG parses as XML, has the requested size, one bar per (day, series) with downloads", async () => {
    await setup();
    await plant();
    const res = await h.request(`${B}/export-usage.svg?w=900&h=400`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("image/svg+xml");
    const doc = await parseStringPromise(await res.text());
    expect(doc.svg.$).toMatchObject({ width: "900", height: "400", xmlns: "http://www.w3.org/2000/svg" });
    const bars = (doc.svg.rect as Array<{ $: Record<string, string> }>).filter((r) => r.$["data-series"]).map((r) => [r.$["data-day"], r.$["data-series"]]);
    expect(bars).toEqual([
      ["2026-03-08", "export"],
      ["2026-03-10", "token"],
    ]);
    const only = await h.request(`${B}/export-usage.svg?source=token`, { headers: auth });
    expect(JSON.parse(only.headers.get("x-usage-legend")!).map((s: any) => s.key)).toEqual(["token"]);
    await parseStringPromise(await only.text());
  });

  test("w and h outside their bounds are a 400 naming them", async () => {
    await setup();
    for (const path of ["export-usage.png", "export-usage.svg"]) {
      for (const [q, field] of [
        ["w=319", "query.w"],
        ["w=1601", "query.w"],
        ["h=199", "query.h"],
        ["h=901", "query.h"],
        ["w=abc", "query.w"],
        ["h=1.5", "query.h"],
      ]) {
        const r = await h.json(`${B}/${path}?${q}`, { headers: auth });
        expect(r.status).toBe(400);
        expect(r.body.error).toBe("invalid_query");
        expect(r.body.message).toContain(field!);
      }
    }
  });
});
