// transparency: the audit-anomaly routes over a large history (issue 17). A database with 1,000 complete runs
// and 1,000,000 examined rows (and the 1,000,000 synced transactions they examined) is written straight into the
// database after `herald migrate` (--rows sets the examined rows: runs of 1,000, and a tenth as many new
// transactions); then, against herald:
//   1. export.json of all 1M rows streamed to a client that discards it: herald's peak RSS growth (VmHWM, reset
//      first through /proc/<pid>/clear_refs) — target < 50 MB;
//   2. GET /healthz, summary.json, runs.json, trend.json, alerts.json with wrk, one after the other — target: each
//      ≥ 50 % of /healthz's req/s in the same run;
//   3. `herald jobs run audit-anomalies` over 100,000 new synced transactions — target < 10 s.
// On PostgreSQL (--engine postgres) the history is loaded with COPY, --instances herald processes share the
// database, the export streams from the first and wrk's load is spread over all (bench/engines.ts).
// BENCH_TRANSPARENCY_ONLY=export runs only case 1 (the seeding still takes ~15 s; the whole run takes minutes).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ChainFixture } from "../src/chain/fixture-data";
import { bulkLoad, heraldCli, measureOn, openEngine, spreadNote, startHeralds, stopAll, type BulkLoad } from "./engines";
import { heraldLaunch, inspectDatabase, progress, tempDir, withRatios, type Benchmark, type CaseResult } from "./support";

const ROWS_PER_RUN = 1000;
// Real-looking addresses (herald checks them), from the fixture's key derivation.
const FIXTURE = new ChainFixture({ seed: "bench-transparency", holders: 1, transactions: 0 });
const MINT = FIXTURE.mint;
const TREASURY = FIXTURE.treasury[0]!.owner;
const RESERVE = FIXTURE.reserve[0]!.owner;
const BASELINE = "herald GET /healthz";
const ROUTES = ["summary.json", "runs.json", "trend.json", "alerts.json"];
const EXPORT_ONLY = process.env.BENCH_TRANSPARENCY_ONLY === "export";

const sig = (n: number) => `${n.toString(36).padStart(12, "0")}${"5".repeat(76)}`; // 88 characters, like a signature
const abs = (raw: bigint) => (raw < 0n ? -raw : raw).toString().padStart(40, "0");

/** Writes the history: what `runs` audit runs over 1,000 transactions each would have left behind, and `newTx` synced since. */
async function seed(load: BulkLoad, runs: number, newTx: number): Promise<void> {
  const tx = load.table("chain_transactions", [
    "signature",
    "mint",
    "slot",
    "block_time",
    "status",
    "token_delta_raw",
    "amount_moved_raw",
    "found_via",
    "sync_run_id",
    "synced_at",
  ]);
  const row = load.table("audit_rows", ["run_id", "kind", "signature", "slot", "block_time", "delta_raw", "abs_key", "types", "severity_rank"]);
  const examined = load.table("audit_examined", ["signature", "run_id"]);
  const run = load.table("audit_runs", [
    "id",
    "label",
    "day",
    "started_at",
    "finished_at",
    "mint",
    "decimals",
    "is_complete",
    "rows_total",
    "signatures_with_anomalies",
    "overall",
    "severity_counts",
    "type_counts",
    "max_abs_delta_raw",
    "thresholds",
    "transactions_examined",
  ]);
  const snapshot = load.table("chain_token_snapshots", [
    "taken_at",
    "mint",
    "decimals",
    "slot",
    "supply_raw",
    "treasury_raw",
    "reserve_raw",
    "tracked_treasury_raw",
    "circulating_raw",
    "wallets_json",
    "rpc_host",
    "method",
  ]);
  const t0 = Date.parse("2025-01-01T00:00:00Z");
  let n = 0;
  for (let r = 1; r <= runs; r++) {
    await load.chunk(() => {
      let sigs = 0;
      let max = 0n;
      for (let i = 0; i < ROWS_PER_RUN; i++, n++) {
        const at = new Date(t0 + n * 60_000).toISOString();
        // Every 20th an untracked outflow (medium), every 200th a large one (critical); the rest internal moves.
        const delta = n % 200 === 0 ? -2_000_000_000_000n : n % 20 === 0 ? -15_000_000_000n : 0n;
        const types = n % 200 === 0 ? "untracked_outflow,large_transfer" : n % 20 === 0 ? "untracked_outflow" : "";
        const rank = n % 200 === 0 ? 4 : n % 20 === 0 ? 2 : 0;
        if (rank) sigs++;
        if (-delta > max) max = -delta;
        tx(sig(n), MINT, 300_000_000 + n * 3, at, "ok", delta.toString(), (delta === 0n ? 1_000_000n : -delta).toString(), TREASURY, null, at);
        row(r, "transaction", sig(n), 300_000_000 + n * 3, at, delta.toString(), abs(delta), types, rank);
        examined(sig(n), r);
      }
      const label = new Date(t0 + r * 15 * 60_000).toISOString().slice(0, 19) + "Z";
      const overall = sigs ? (max >= 1_000_000_000_000n ? "bad" : "warn") : "ok";
      run(r, label, label.slice(0, 10), label, label, MINT, 6, 1, ROWS_PER_RUN, sigs, overall, "{}", "{}", max.toString(), "{}", ROWS_PER_RUN);
    });
    if (r % 100 === 0) progress(`seeded ${r} runs (${n.toLocaleString("en-US")} rows)`);
  }
  // The synced-but-unexamined transactions of the next audit run, and a token snapshot for the mint's decimals.
  await load.chunk(() => {
    for (let i = 0; i < newTx; i++, n++) {
      const at = new Date(t0 + n * 60_000).toISOString();
      const delta = i % 50 === 0 ? -25_000_000_000n : i % 50 === 1 ? 3_000_000n : 0n;
      tx(
        sig(n),
        MINT,
        300_000_000 + n * 3,
        at,
        "ok",
        delta.toString(),
        (delta === 0n ? 1_000_000n : delta < 0n ? -delta : delta).toString(),
        TREASURY,
        null,
        at,
      );
    }
    snapshot(new Date().toISOString(), MINT, 6, 300_000_000 + n * 3, "1000", "0", "0", "0", "1000", "[]", "bench", "bench");
  });
  await load.commit();
  if (load.kind === "postgres") {
    // The runs were written with their ids: the identity sequence moves past them, or the next audit run would take id 1.
    await load.exec("SELECT setval(pg_get_serial_sequence('audit_runs', 'id'), (SELECT max(id) FROM audit_runs))");
    // PostgreSQL plans from statistics that a table loaded seconds ago does not have yet (autovacuum takes them
    // within a minute or so); a database in service has them. SQLite runs without ANALYZE, as before.
    await load.analyze();
  }
}

const kb = (pid: number, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);

/** Streams `url` to nowhere; returns bytes and ms. */
async function drain(url: string): Promise<{ bytes: number; ms: number; status: number }> {
  const t0 = performance.now();
  const res = await fetch(url);
  let bytes = 0;
  const reader = res.body!.getReader();
  for (let i = 0; i < 10_000_000; i++) {
    const { value, done } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
  }
  return { bytes, ms: Math.round(performance.now() - t0), status: res.status };
}

const transparency: Benchmark = {
  name: "transparency",
  description: "audit-anomaly routes over 1,000 runs / 1,000,000 rows (--rows) vs /healthz; export.json RSS; an audit run over 100,000 new transactions",
  async run(opts) {
    const launch = heraldLaunch(opts.herald);
    const runs = Math.max(1, Math.round((opts.rows ?? 1_000_000) / ROWS_PER_RUN));
    const rows = runs * ROWS_PER_RUN;
    const newTx = Math.max(1, Math.round(rows / 10));
    const notes: string[] = [`herald ran from ${launch.mode}`];
    if (launch.warning) notes.push(launch.warning);
    const summary: string[] = [];
    const errors: string[] = [];
    const dir = tempDir("transparency");
    const engine = await openEngine(opts);
    const env = {
      TOKEN_MINT: MINT,
      TREASURY_WALLETS: TREASURY,
      RESERVE_WALLETS: RESERVE,
      SOLANA_RPC_URLS: "http://127.0.0.1:9",
      RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
    };
    const results: CaseResult[] = [];
    try {
      const db = await engine.database(join(dir.path, "herald"));
      await heraldCli(db, launch, ["migrate"], env);
      progress(`seeding ${runs} runs × ${ROWS_PER_RUN} rows and ${newTx.toLocaleString("en-US")} new transactions on ${engine.kind}`);
      const s0 = performance.now();
      const load = bulkLoad(db);
      try {
        await seed(load, runs, newTx);
      } finally {
        await load.close();
      }
      const seconds = ((performance.now() - s0) / 1000).toFixed(1);
      const bytes = db.kind === "sqlite" ? inspectDatabase(join(db.dir, "herald.db")).bytes : await (await db.store()).sizeBytes();
      await db.close();
      notes.push(
        `seeded ${rows.toLocaleString("en-US")} examined rows in ${seconds} s (${engine.kind === "postgres" ? "COPY, then VACUUM ANALYZE" : "bun:sqlite INSERTs"}); database ${(bytes / 1024 / 1024).toFixed(0)} MiB`,
      );

      progress(`starting ${engine.instances} herald instance(s) from ${launch.mode} on ${engine.kind}`);
      const heralds = await startHeralds(db, launch, engine.instances, env);
      try {
        const herald = heralds[0]!;
        const pid = herald.proc.pid;
        await drain(`${herald.baseUrl}/transparency/audit-anomalies/export.json?run=1`); // JIT and page cache: not counted
        writeFileSync(`/proc/${pid}/clear_refs`, "5"); // resets VmHWM to the current RSS
        const before = kb(pid, "VmRSS");
        const ex = await drain(`${herald.baseUrl}/transparency/audit-anomalies/export.json?from=2000-01-01`);
        const growthMb = (kb(pid, "VmHWM") - before) / 1024;
        summary.push(
          `export.json, all ${rows.toLocaleString("en-US")} rows: ${(ex.bytes / 1024 / 1024).toFixed(0)} MiB in ${(ex.ms / 1000).toFixed(1)} s (HTTP ${ex.status}); peak RSS growth ${growthMb.toFixed(1)} MB (RSS before ${(before / 1024).toFixed(0)} MB) — target < 50 MB`,
        );
        if (!(growthMb < 50)) errors.push(`export.json peak RSS growth ${growthMb.toFixed(1)} MB ≥ 50 MB`);
        if (EXPORT_ONLY) {
          notes.push("BENCH_TRANSPARENCY_ONLY=export: the wrk cases and the audit run were skipped");
          return {
            benchmark: "transparency",
            description: transparency.description,
            topology: engine.topology("the export streams from the first instance"),
            results: [],
            notes,
            summary,
            errors,
          };
        }

        results.push(await measureOn(BASELINE, heralds, "/healthz", opts));
        for (const route of ROUTES) results.push(await measureOn(`GET ${route}`, heralds, `/transparency/audit-anomalies/${route}`, opts));
      } finally {
        notes.push(...(await stopAll(heralds)));
      }

      progress(`audit run over ${newTx.toLocaleString("en-US")} new transactions`);
      const t0 = performance.now();
      const out = JSON.parse(await heraldCli(db, launch, ["jobs", "run", "audit-anomalies", "--json"], env, 120_000));
      const wall = (performance.now() - t0) / 1000;
      const run = (await (
        await db.store()
      ).get<Record<string, unknown>>("SELECT id, rows_total, signatures_with_anomalies, overall FROM audit_runs ORDER BY id DESC LIMIT 1"))!;
      await db.close();
      summary.push(
        `audit run over ${newTx.toLocaleString("en-US")} new transactions (${rows.toLocaleString("en-US")} already examined): job ${(out.run.duration_ms / 1000).toFixed(2)} s, CLI wall ${wall.toFixed(2)} s; run ${run.id}: ${run.rows_total} rows, ${run.signatures_with_anomalies} anomalies, ${run.overall} — target < 10 s`,
      );
      if (!out.run.ok || out.run.duration_ms >= 10_000) errors.push(`audit run: ok=${out.run.ok}, ${out.run.duration_ms} ms`);
    } finally {
      await engine.close();
      dir.remove();
    }
    const rated = withRatios(results, BASELINE);
    for (const r of rated.filter((x) => x.case !== BASELINE)) {
      summary.push(`${r.case}: ${(100 * (r.ratio_vs_baseline ?? 0)).toFixed(0)} % of /healthz — target ≥ 50 %`);
      if ((r.ratio_vs_baseline ?? 0) < 0.5) errors.push(`${r.case} at ${(100 * (r.ratio_vs_baseline ?? 0)).toFixed(0)} % of /healthz`);
      if (r.non_2xx > 0 || r.errors > 0) errors.push(`${r.case}: ${r.non_2xx} non-2xx, ${r.errors} socket errors`);
    }
    return {
      benchmark: "transparency",
      description: transparency.description,
      topology: engine.topology(
        `the export streams from the first instance; ${spreadNote(engine.instances, opts)}; the audit run is \`herald jobs run\` after the servers stopped`,
      ),
      results: rated,
      notes,
      summary,
      errors,
    };
  },
};

export default transparency;
