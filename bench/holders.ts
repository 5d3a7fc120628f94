// The `holders` benchmark: herald's holders-snapshot job over 100k and 1M fixture token accounts, beside the
// floor — the time the fixture server alone needs to serve the same getProgramAccounts reply to a client that
// reads and discards it. Each run is a separate child process (bench/holders-child.ts) so its peak RSS (VmHWM)
// is its own. Targets (issue 6): snapshot within 2× of the floor, peak RSS under 300 MB at 1M.
// --rows N measures one fixture of N accounts instead. On PostgreSQL (--engine postgres) each snapshot run writes into a fresh database of a throwaway cluster
// (bench/engines.ts). The snapshot is a singleton job, run by one instance whatever their number: --instances
// above 1 is refused.
import { join } from "node:path";
import { ChainFixture } from "../src/chain/fixture-data";
import { openEngine, topologyOf, type BenchEngine } from "./engines";
import { freePort, progress, ROOT, startChild, tempDir, UsageError, type BenchReport, type Benchmark, type CaseResult } from "./support";

const SIZES = [100_000, 1_000_000];
const RUNS = 3;
const SEED = "bench";
const MAX_RSS_MB = 300;
const MAX_RATIO = 2;

interface ChildOut {
  mode: string;
  wall_ms: number;
  vm_hwm_kb: number;
  bytes?: number;
  status?: number;
  ok?: boolean;
  error?: string | null;
  accounts_scanned?: number;
  holders?: number;
  total_raw?: string;
  rss_before_kb?: number;
  /** The job's own measure of the scan (fetch + stream parse), without the job_runs bookkeeping. */
  scan_ms?: number;
}

/** One run in its own process; `env` carries the database to write into (DATABASE_URL on PostgreSQL). */
async function child(args: string[], env: Record<string, string> = {}): Promise<ChildOut> {
  const proc = Bun.spawn([process.execPath, join(ROOT, "bench", "holders-child.ts"), ...args], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const line = out.trim().split("\n").pop() ?? "";
  if (code !== 0 || !line.startsWith("{")) throw new Error(`holders-child ${args[0]} exited ${code}: ${err.slice(-800)}`);
  return JSON.parse(line) as ChildOut;
}

/** What the scan must find, computed from the fixture directly (cheap: no addresses, no sort). */
function expected(f: ChainFixture) {
  let accounts = 0,
    holders = 0,
    total = 0n,
    chunk = 0;
  for (const w of f.wallets())
    for (const a of w.accounts) {
      accounts++;
      if (a.amount > 0n) holders++;
      total += a.amount;
    }
  for (let i = 0; i < f.holderCount; i++) {
    const a = f.holderAmount(i);
    accounts++;
    if (a > 0) holders++;
    chunk += a;
    if (chunk > 2 ** 52) {
      total += BigInt(chunk);
      chunk = 0;
    }
  }
  return { accounts, holders, total: (total + BigInt(chunk)).toString() };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (kb: number) => Math.round(kb / 1024);
const label = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);

async function measureSize(n: number, engine: BenchEngine, report: { results: CaseResult[]; summary: string[]; errors: string[]; notes: string[] }) {
  const dir = tempDir(`holders-${label(n)}`);
  const fixture = new ChainFixture({ seed: SEED, holders: n, transactions: 0 });
  const want = expected(fixture);
  const port = await freePort();
  progress(`${label(n)}: starting dev-rpc with ${n} holders`);
  const rpc = await startChild(
    "dev-rpc",
    [process.execPath, join(ROOT, "src", "main.ts"), "dev-rpc", "--port", String(port), "--holders", String(n), "--seed", SEED, "--transactions", "0"],
    { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
    "/",
    join(dir.path, "dev-rpc.log"),
    port,
  );
  const floors: ChildOut[] = [];
  const snaps: ChildOut[] = [];
  try {
    await child(["floor", rpc.baseUrl, fixture.mint]); // warm the fixture's JIT; not counted
    for (let r = 0; r < RUNS; r++) {
      progress(`${label(n)}: run ${r + 1}/${RUNS}`);
      floors.push(await child(["floor", rpc.baseUrl, fixture.mint]));
      const db = await engine.database(tempDir(`holders-db-${r}`).path);
      snaps.push(await child(["snapshot", rpc.baseUrl, fixture.mint, db.dir], db.env));
    }
  } finally {
    await rpc.stop();
    dir.remove();
  }
  for (const s of snaps) {
    if (!s.ok) report.errors.push(`${label(n)}: the snapshot job failed: ${s.error}`);
    else if (s.accounts_scanned !== want.accounts || s.holders !== want.holders || s.total_raw !== want.total) {
      report.errors.push(
        `${label(n)}: snapshot found ${s.accounts_scanned} accounts / ${s.holders} holders / total ${s.total_raw}; the fixture has ${want.accounts} / ${want.holders} / ${want.total}`,
      );
    }
  }
  const floorMs = median(floors.map((f) => f.wall_ms));
  const snapMs = median(snaps.map((s) => s.wall_ms));
  const peakKb = Math.max(...snaps.map((s) => s.vm_hwm_kb));
  const ratio = snapMs / floorMs;
  const bytes = floors[0]!.bytes ?? 0;
  const row = (kase: string, runs: ChildOut[], ms: number): CaseResult => ({
    case: kase,
    url: rpc.baseUrl,
    requests_per_sec: Math.round(want.accounts / (ms / 1000)),
    p50_ms: ms,
    p99_ms: Math.max(...runs.map((x) => x.wall_ms)),
    non_2xx: 0,
    errors: 0,
    requests: want.accounts,
    ratio_vs_baseline: Number((floorMs / ms).toFixed(3)),
  });
  report.results.push(row(`floor: fixture serves ${label(n)} accounts`, floors, floorMs), row(`holders-snapshot ${label(n)}`, snaps, snapMs));
  report.summary.push(
    `${label(n)} accounts (${(bytes / 1e6).toFixed(0)} MB of JSON): floor ${(floorMs / 1000).toFixed(2)} s, snapshot ${(snapMs / 1000).toFixed(2)} s ` +
      `(scan ${(median(snaps.map((s) => s.scan_ms ?? 0)) / 1000).toFixed(2)} s) = ${ratio.toFixed(2)}× the floor (target ≤ ${MAX_RATIO}×); ` +
      `peak RSS ${mb(peakKb)} MB (before the scan ${mb(snaps[0]!.rss_before_kb ?? 0)} MB; the floor client ${mb(Math.max(...floors.map((f) => f.vm_hwm_kb)))} MB)`,
  );
  if (n === 1_000_000 && mb(peakKb) >= MAX_RSS_MB) report.notes.push(`peak RSS at 1M is ${mb(peakKb)} MB, over the ${MAX_RSS_MB} MB target`);
  if (ratio > MAX_RATIO) report.notes.push(`${label(n)}: the snapshot took ${ratio.toFixed(2)}× the floor, over the ${MAX_RATIO}× target`);
}

const holders: Benchmark = {
  name: "holders",
  description: "holders-snapshot (streamed getProgramAccounts, amounts only) vs the fixture serving the same reply",
  async run(opts): Promise<BenchReport> {
    if (topologyOf(opts).instances > 1)
      throw new UsageError("holders: the snapshot is a singleton job that one instance runs whatever their number; --instances does not apply");
    const report = { results: [] as CaseResult[], summary: [] as string[], errors: [] as string[], notes: [] as string[] };
    const engine = await openEngine(opts);
    try {
      for (const n of opts.rows ? [opts.rows] : SIZES) await measureSize(n, engine, report);
    } finally {
      await engine.close();
    }
    report.notes.push(
      "req/s = accounts per second; p50 = median wall time of 3 runs, p99 = the slowest; vs baseline = floor time ÷ this time. --duration and --connections do not apply",
    );
    return {
      benchmark: "holders",
      description: holders.description,
      topology: engine.topology(
        "each snapshot run is `herald`'s job in a child process over a fresh database; the floor is a client that reads the reply and discards it",
      ),
      ...report,
    };
  },
};

export default holders;
