import { afterEach, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { gunzipSync } from "node:zlib";
import { P, plantedRun, plantedWorld, type AuditWorld } from "./support";
import { countsWorld, type CountsWorld } from "./world";

// The row exports (streamed JSON and CSV, equal row for row), their filters, and the validators every
// transparency GET carries: Cache-Control, a strong ETag, Last-Modified, 304.

let w: AuditWorld | undefined;
let c: CountsWorld | undefined;
afterEach(async () => {
  await w?.close();
  await c?.close();
  w = undefined;
  c = undefined;
});

const cells = (r: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v)]));

describe("export.json and export (CSV)", () => {
  test("every row of the run; the CSV parsed back equals the JSON; filters select the same rows in both", async () => {
    w = await plantedWorld();
    await plantedRun(w);
    const all = (await w.h.json(`${P}/export.json`)).body;
    expect(all).toMatchObject({ success: true, runs: [1], count: 16, query: { run: "latest", from: null, to: null } });
    expect(all.rows).toHaveLength(16);
    const large = all.rows.find((r: any) => r.anomaly_types.includes("large_transfer"));
    expect(large).toMatchObject({
      kind: "transaction",
      delta: "-1250000",
      max_abs_delta: "1250000",
      severity: "critical",
      anomaly_types: ["untracked_outflow", "large_transfer"],
      triage_status: null,
    });
    const csvText = await (await w.h.request(`${P}/export`)).text();
    expect(parse(csvText, { columns: true })).toEqual(all.rows.map(cells));
    for (const q of [
      "severity=high,critical",
      "types=sync_gap,duplicate_signature",
      "min_abs_delta=2500.5",
      `signature=${large.signature}`,
      "severity=low&min_abs_delta=0.000001",
    ]) {
      const j = (await w.h.json(`${P}/export.json?${q}`)).body;
      const text = await (await w.h.request(`${P}/export?${q}`)).text();
      expect([q, parse(text, { columns: true })]).toEqual([q, j.rows.map(cells)]);
      expect(j.count).toBe(j.rows.length);
    }
    expect((await w.h.json(`${P}/export.json?severity=high,critical`)).body.rows.map((r: any) => r.severity).sort()).toEqual(["critical", "critical", "high"]);
    expect((await w.h.json(`${P}/export.json?min_abs_delta=2500.5`)).body.rows.map((r: any) => r.max_abs_delta).sort()).toEqual([
      "12345.678901",
      "1250000",
      "2500.5",
      "4321",
    ]);
  });

  test("from/to select complete runs by label; run with from/to, from after to, bad dates are 400s naming the parameter", async () => {
    c = await countsWorld();
    await c.round(1);
    c.h.clock.advanceSeconds(86_400);
    await c.round(2);
    const both = (await c.h.json(`${P}/export.json?from=2026-01-01&to=2026-01-02`)).body;
    expect([both.runs, both.count]).toEqual([[1, 2], 3]);
    expect((await c.h.json(`${P}/export.json?from=2026-01-02`)).body.runs).toEqual([2]);
    expect((await c.h.json(`${P}/export.json?to=2026-01-01`)).body.runs).toEqual([1]);
    for (const [q, field] of [
      ["run=1&from=2026-01-01", "query.run"],
      ["from=2026-01-03&to=2026-01-01", "query.from"],
      ["from=01/02/2026", "query.from"],
      ["to=2026-01-01T25:00:00Z", "query.to"],
      ["severity=urgent", "query.severity"],
      ["min_abs_delta=-0.5", "query.min_abs_delta"],
      // Refused before the stream starts: a value the database refuses mid-stream could only cut the connection.
      ["signature=%00", "query.signature"],
      ["signature=abc%00def&from=2026-01-01", "query.signature"],
      ["signature=abc%0Adef", "query.signature"],
    ]) {
      for (const path of [`${P}/export.json`, `${P}/export`]) {
        const r = await c.h.json(`${path}?${q}`);
        expect([path, q, r.status, r.body.error, r.body.details[0].field]).toEqual([path, q, 400, "invalid_query", field]);
      }
    }
  });

  test("a gzip client gets the stream compressed as it goes, the same rows", async () => {
    w = await plantedWorld();
    await plantedRun(w);
    const plain = await (await w.h.request(`${P}/export.json`)).text();
    const r = await w.h.request(`${P}/export.json`, { headers: { "accept-encoding": "gzip" } });
    expect(r.headers.get("content-encoding")).toBe("gzip");
    expect(r.headers.get("etag")).toStartWith('W/"s-');
    expect(gunzipSync(new Uint8Array(await r.arrayBuffer())).toString("utf8")).toBe(plain);
  });
});

describe("validators on every transparency GET", () => {
  const PATHS = [
    "summary.json",
    "runs.json",
    "trend.json",
    "alerts.json",
    "alerts.csv",
    "diff/compare.json",
    "diff/compare.csv",
    "diff/export.json",
    "diff/export",
    "export",
    "export.json",
    "glossary.json",
    "threshold-history.json",
    "triage.json",
    "declared-movements.json",
    "schema-registry.json",
  ];

  test("Cache-Control, strong ETag and Last-Modified; 304 on If-None-Match and on If-Modified-Since; a change moves both", async () => {
    w = await plantedWorld(undefined, { env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } }); // ~130 requests from one address
    await plantedRun(w);
    const lastModified = new Date(((await w.h.ctx.store.get("SELECT changed_at FROM audit_state")) as { changed_at: string }).changed_at).toUTCString();
    for (const path of PATHS) {
      const r = await w.h.request(`${P}/${path}`);
      expect([path, r.status, r.headers.get("cache-control"), r.headers.get("last-modified")]).toEqual([path, 200, "public, max-age=60", lastModified]);
      const etag = r.headers.get("etag")!;
      expect(etag).toMatch(/^"[^"]+"$/); // strong
      expect(r.headers.get("x-request-id")).toBeTruthy();
      const again = await w.h.request(`${P}/${path}`);
      expect(again.headers.get("etag")).toBe(etag); // same data, same bytes
      const inm = await w.h.request(`${P}/${path}`, { headers: { "if-none-match": etag } });
      expect([path, inm.status, await inm.text(), inm.headers.get("etag"), inm.headers.get("cache-control")]).toEqual([
        path,
        304,
        "",
        etag,
        "public, max-age=60",
      ]);
      const weak = await w.h.request(`${P}/${path}`, { headers: { "if-none-match": `W/${etag}` } });
      expect(weak.status).toBe(304);
      const ims = await w.h.request(`${P}/${path}`, { headers: { "if-modified-since": lastModified } });
      expect([path, ims.status]).toEqual([path, 304]);
      const older = await w.h.request(`${P}/${path}`, { headers: { "if-modified-since": new Date(Date.parse(lastModified) - 1000).toUTCString() } });
      expect([path, older.status]).toEqual([path, 200]);
      // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
      const other = await w.h.request(`${P}/${path}`, { headers: { "if-none-match": '"other"', "if-modified-since": lastModified } });
      expect([path, other.status]).toEqual([path, 200]);
    }
    const before = (await w.h.request(`${P}/summary.json`)).headers.get("etag");
    w.h.clock.advanceSeconds(120);
    await w.h.ctx.jobs.runNow("audit-anomalies");
    const after = await w.h.request(`${P}/summary.json`, { headers: { "if-none-match": before! } });
    expect(after.status).toBe(200);
    expect(Date.parse(after.headers.get("last-modified")!)).toBeGreaterThan(Date.parse(lastModified));
  });

  test("the trust dashboard and trust.json carry validators too; include_meta adds meta", async () => {
    w = await plantedWorld();
    // The requests themselves are not the data under test: logged, each would be one more latency sample.
    w.h.ctx.requestLog.record = () => {};
    for (const path of ["/transparency/trust-dashboard.json", "/trust.json"]) {
      const r = await w.h.request(path);
      expect([r.status, r.headers.get("cache-control")]).toEqual([200, "public, max-age=60"]);
      const etag = r.headers.get("etag")!;
      expect((await w.h.request(path, { headers: { "if-none-match": etag } })).status).toBe(304);
      expect((await w.h.request(path, { headers: { "if-modified-since": r.headers.get("last-modified")! } })).status).toBe(304);
    }
    const meta = (await w.h.json(`${P}/summary.json?include_meta=1`)).body.meta;
    expect(meta.request_id).toMatch(/^req_/);
  });
});
