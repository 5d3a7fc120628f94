import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { PLANTABLE } from "../../src/chain/fixture-anomalies";
import { chainEnv, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";
import { TARGET } from "../support/target";
import { adminInit, expectRefusal, row, startE2E, type E2E } from "./support";

// Transparency as a holder or journalist reads it (docs/transparency.md): the fixture chain of `herald dev-rpc
// --plant all`, the walk-through's two rounds of chain jobs and one audit run (run here, in this process, on the
// shared database), then the reports and exports over HTTP: the JSON and the CSV agree row for row, and a
// revalidation with the ETag is a 304 until the data changes.

const P = "/transparency/audit-anomalies";
let e: E2E;
let rpc: DevRpcServer;

beforeAll(async () => {
  rpc = startSolanaRpc({ holders: 40, transactions: 0, seed: "e2e-audit", plant: PLANTABLE });
  e = await startE2E(chainEnv(rpc, [rpc.url], { ...rpc.plan?.env, SOLANA_RPC_RETRIES: "0" }));
  const jobs = [
    "token-snapshot",
    "mint-authority-snapshot",
    "transaction-sync",
    "token-snapshot",
    "mint-authority-snapshot",
    "transaction-sync",
    "audit-anomalies",
  ];
  for (const job of jobs) {
    // In process the test clock stands still unless moved; a served target's jobs run on the wall clock, which
    // moves by itself. A second between jobs keeps each job's rows strictly later than the last, as they are in
    // the walk-through (test/transparency/walkthrough.test.ts); nothing below depends on the exact times.
    if (TARGET.kind === "app") e.h.clock.advanceSeconds(1);
    const run = await e.h.ctx.jobs.runNow(job);
    if (!run.ok) throw new Error(`${job} failed: ${JSON.stringify(run)}`);
  }
});
afterAll(async () => {
  await e?.stop();
  await rpc?.stop();
});

/** A JSON cell as csv-stringify writes it: null empty, objects and arrays as JSON text. */
const cells = (r: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v)]));

describe(`transparency over HTTP (${TARGET.label})`, () => {
  test("the summary and the run list report the walk-through's run: every planted type, overall bad", async () => {
    const summary = await e.h.json(`${P}/summary.json`);
    expect(summary.status).toBe(200);
    expect(summary.headers.get("cache-control")).toBe("public, max-age=60");
    expect(summary.body).toMatchObject({ success: true, selector: "latest", selected_run: 1, summary_available: true });
    expect(summary.body.run).toMatchObject({ run: 1, is_complete: true, overall: "bad", signatures_with_anomalies: 7, rows_total: 16 });
    const types = summary.body.run.type_counts as Record<string, number>;
    expect(PLANTABLE.filter((t) => !(types[t]! >= 1))).toEqual([]);
    expect(summary.body.top_anomalies[0]).toMatchObject({ severity: "critical" });

    const runs = await e.h.json(`${P}/runs.json`);
    expect(runs.body).toMatchObject({ total_runs: 1, count: 1, selected_run: 1 });
    expect(runs.body.runs[0]).toMatchObject({ run: 1, is_complete: true, is_selected: true });
    expectRefusal(await e.h.json(`${P}/summary.json?run=99`), 404, "run_not_found");
    expectRefusal(await e.h.json(`${P}/runs.json?limit=0`), 400, "invalid_query");
  });

  test("export.json and the CSV export carry the same rows; csv-parse reads the CSV back to them", async () => {
    const json = await e.h.json(`${P}/export.json`);
    expect(json.body).toMatchObject({ success: true, runs: [1], count: 16 });
    const csv = await e.h.request(`${P}/export`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const text = await csv.text();
    expect(text.split("\r\n")[0]).toBe("run_id,signature,kind,slot,block_time,delta,max_abs_delta,anomaly_types,severity,declaration_id,triage_status,detail");
    expect(parse(text, { columns: true })).toEqual(json.body.rows.map(cells));

    const high = await e.h.json(`${P}/export.json?severity=high,critical`);
    const highCsv = parse(await (await e.h.request(`${P}/export?severity=high,critical`)).text(), { columns: true }) as Array<Record<string, string>>;
    expect(highCsv).toEqual(high.body.rows.map(cells));
    expect(highCsv.map((r) => r.severity).sort()).toEqual(["critical", "critical", "high"]);

    const compare = parse(await (await e.h.request(`${P}/diff/compare.csv`)).text(), { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(compare[0]!)).toEqual(["run_a", "run_b", "type", "selected", "latest", "delta"]);
    expect(compare.find((r) => r.type === "rows_total")).toMatchObject({ run_b: "1", latest: "16" });
  });

  test("ETag and Last-Modified: 304 on revalidation until the data changes, then a new ETag", async () => {
    // Uncompressed the ETag is strong; compressed (Bun's fetch asks for gzip/br by itself) it is the same tag made
    // weak (docs/http-conventions.md), and If-None-Match compares weakly, so both revalidate.
    const identity = { "accept-encoding": "identity" };
    const first = await e.h.request(`${P}/summary.json`, { headers: identity });
    const etag = first.headers.get("etag")!;
    const modified = first.headers.get("last-modified")!;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(modified).toMatch(/GMT$/);
    const body = await first.text();
    const gzipped = await e.h.request(`${P}/summary.json`, { headers: { "accept-encoding": "gzip" } });
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    expect(gzipped.headers.get("etag")).toBe(`W/${etag}`);
    // fetch decodes the body; app.handle hands over the compressed bytes as they would go on the wire.
    const raw = new Uint8Array(await gzipped.arrayBuffer());
    expect(new TextDecoder().decode(TARGET.kind === "app" ? Bun.gunzipSync(raw) : raw)).toBe(body); // the same data, the same bytes

    for (const tag of [etag, `W/${etag}`]) {
      const again = await e.h.request(`${P}/summary.json`, { headers: { ...identity, "if-none-match": tag } });
      expect({ tag, status: again.status, body: await again.text() }).toEqual({ tag, status: 304, body: "" });
      expect(again.headers.get("etag")).toBe(etag);
    }
    expect((await e.h.request(`${P}/summary.json`, { headers: { ...identity, "if-modified-since": modified } })).status).toBe(304);
    // If-None-Match wins over If-Modified-Since.
    expect((await e.h.request(`${P}/summary.json`, { headers: { ...identity, "if-none-match": '"other"', "if-modified-since": modified } })).status).toBe(200);

    // An operator triages a flagged row: the audit data changes, so does the ETag.
    const flagged = (JSON.parse(body) as { top_anomalies: Array<{ signature: string; severity: string }> }).top_anomalies[0]!;
    expect(flagged.severity).toBe("critical");
    const triage = await e.h.json(
      `/admin/transparency/triage/${encodeURIComponent(flagged.signature)}`,
      adminInit(e, "PUT", { status: "investigating", owner: "treasury committee", note: "e2e" }),
    );
    expect(triage.status).toBe(200);
    const changed = await e.h.request(`${P}/summary.json`, { headers: { ...identity, "if-none-match": etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    const top = ((await changed.json()) as { top_anomalies: Array<{ signature: string; triage_status: string | null }> }).top_anomalies;
    expect(top.find((a) => a.signature === flagged.signature)?.triage_status).toBe("investigating");
    expect(await row(e.h, "SELECT count(*) AS n FROM admin_audit WHERE action LIKE 'transparency.triage%'")).toEqual({ n: 1 });

    const trust = await e.h.request("/trust.json", { headers: identity });
    expect(trust.status).toBe(200);
    expect(trust.headers.get("cache-control")).toBe("public, max-age=60");
    expect((await e.h.request("/trust.json", { headers: { ...identity, "if-none-match": trust.headers.get("etag")! } })).status).toBe(304);
  });
});
