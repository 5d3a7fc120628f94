// migrate: `herald migrate-to-postgres` over a large SQLite file (issue 28): --rows request_log rows (default
// 1,000,000) and a tenth as many salutes ledger rows (with their balances), written straight into a migrated file,
// then copied by the real command (a child process) into an empty database on a throwaway PostgreSQL cluster on
// 127.0.0.1 (fsync off, as the tests run it). Reported: rows/s per table and overall, beside the floor of reading
// the same rows out of SQLite alone in the same run. Not a timed test; not in CI.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { openEngine } from "./engines";
import { heraldLaunch, progress, ROOT, tempDir, type Benchmark, type CaseResult } from "./support";

const USERS = 1_000;

/** The source file: migrated by Herald, then filled in one transaction per 50,000 rows. */
function fill(path: string, logRows: number, ledgerRows: number): void {
  const h = openDatabase(path);
  migrate(h);
  const db = h.sqlite;
  const at = (i: number) => new Date(Date.UTC(2026, 10, 1) + i * 100).toISOString();
  const user = db.prepare(
    "INSERT INTO partner_users (partner, mode, external_id, status, is_verified, created_at, updated_at) VALUES ('Bench', 'live', ?, 'active', 0, ?, ?)",
  );
  const log = db.prepare(
    "INSERT INTO request_log (at, method, route, status, latency_us, key_ref, client_ip, request_id, error_code) VALUES (?, 'GET', '/api/partner/users', ?, ?, NULL, '203.0.113.7', ?, NULL)",
  );
  const entry = db.prepare(
    "INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, key_id, idempotency_key, created_at) VALUES (?, 'Bench', 'live', ?, ?, 'bench', 'bench', NULL, ?, ?)",
  );
  const balance = db.prepare(
    "INSERT INTO salutes_balances (user_id, partner, mode, balance_minor, updated_at) VALUES (?, 'Bench', 'live', ?, ?) ON CONFLICT (user_id) DO UPDATE SET balance_minor = excluded.balance_minor, updated_at = excluded.updated_at",
  );
  db.transaction(() => {
    for (let u = 1; u <= USERS; u++) user.run(`bench-${u}`, at(0), at(0));
  })();
  for (let start = 0; start < logRows; start += 50_000) {
    db.transaction(() => {
      for (let i = start; i < Math.min(logRows, start + 50_000); i++) log.run(at(i), i % 17 === 0 ? 404 : 200, 300 + (i % 900), `req_${i}`);
    })();
  }
  const balances = new Map<number, number>();
  for (let start = 0; start < ledgerRows; start += 50_000) {
    db.transaction(() => {
      for (let i = start; i < Math.min(ledgerRows, start + 50_000); i++) {
        const u = 1 + (i % USERS);
        const after = (balances.get(u) ?? 0) + 125;
        balances.set(u, after);
        entry.run(u, 125, after, `bench-${i}`, at(i));
      }
    })();
  }
  db.transaction(() => {
    for (const [u, b] of balances) balance.run(u, b, at(ledgerRows));
  })();
  h.close();
}

const migrateBench: Benchmark = {
  name: "migrate",
  description: "herald migrate-to-postgres over --rows request_log rows and a tenth as many ledger rows, vs reading them out of SQLite",
  async run(opts) {
    const logRows = opts.rows ?? 1_000_000;
    const ledgerRows = Math.floor(logRows / 10);
    const dir = tempDir("migrate");
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [
      `herald ran from ${launch.mode}`,
      `${logRows.toLocaleString("en-US")} request_log rows, ${ledgerRows.toLocaleString("en-US")} ledger rows, ${USERS} users`,
    ];
    const errors: string[] = [];
    const results: CaseResult[] = [];
    const engine = await openEngine({ engine: "postgres", instances: 1, fsync: "off" });
    try {
      const file = join(dir.path, "source.db");
      progress(`filling ${file}`);
      fill(file, logRows, ledgerRows);

      progress("reading every row out of SQLite (the floor)");
      const src = new Database(file, { readonly: true });
      const t0 = performance.now();
      let read = 0;
      for (const table of ["request_log", "salutes_ledger"]) for (const _ of src.query(`SELECT * FROM ${table}`).iterate()) read++;
      const readSeconds = (performance.now() - t0) / 1000;
      src.close();

      const url = (await engine.database(join(dir.path, "moved"))).url!;
      progress("herald migrate-to-postgres");
      const proc = Bun.spawn([...launch.cmd, "migrate-to-postgres", "--from", file, "--to", url, "--json"], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", NODE_ENV: "development", LOG_LEVEL: "warn", HERALD_DB_PATH: file },
        stdout: "pipe",
        stderr: "pipe",
      });
      const killer = setTimeout(() => proc.kill("SIGKILL"), 1_800_000);
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      clearTimeout(killer);
      if (code !== 0) throw new Error(`migrate-to-postgres exited ${code}: ${err.trim().split("\n").slice(-3).join(" | ")} ${out.slice(0, 300)}`);
      const summary = JSON.parse(out) as { rows: number; seconds: number; rows_per_second: number; problems: string[] };
      errors.push(...summary.problems);
      results.push({
        case: "herald migrate-to-postgres (every table)",
        url: "(child process)",
        requests_per_sec: summary.rows_per_second,
        p50_ms: Number.NaN,
        p99_ms: Number.NaN,
        non_2xx: summary.problems.length,
        errors: 0,
        requests: summary.rows,
        ratio_vs_baseline: null,
      });
      results.push({
        case: "floor: SELECT * out of SQLite (request_log, salutes_ledger)",
        url: "(in-process)",
        requests_per_sec: Math.round(read / readSeconds),
        p50_ms: Number.NaN,
        p99_ms: Number.NaN,
        non_2xx: 0,
        errors: 0,
        requests: read,
        ratio_vs_baseline: null,
      });
      notes.push(
        `copied ${summary.rows.toLocaleString("en-US")} rows in ${summary.seconds} s; checks: ${summary.problems.length ? summary.problems.join("; ") : "row counts and balances equal"}`,
      );
    } finally {
      await engine.close();
      dir.remove();
    }
    const [copy, floor] = results;
    return {
      benchmark: "migrate",
      description: migrateBench.description,
      results: results.map((r) => ({ ...r, ratio_vs_baseline: floor ? Number((r.requests_per_sec / floor.requests_per_sec).toFixed(3)) : null })),
      notes,
      summary: copy
        ? [`migrate-to-postgres: ${Math.round(copy.requests_per_sec).toLocaleString("en-US")} rows/s over ${copy.requests.toLocaleString("en-US")} rows`]
        : [],
      ratios: {},
      errors,
    };
  },
};

export default migrateBench;
