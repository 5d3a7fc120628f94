import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { resolve } from "node:path";
import { children, serverPids } from "./children";

export const ROOT = resolve(import.meta.dir, "..");
export const HOST = "127.0.0.1";

// ---------------------------------------------------------------------------------------------- options

export interface BenchOptions {
  durationSeconds: number;
  connections: number;
  threads: number;
  warmupSeconds: number;
  json: boolean;
  /** auto = dist/herald when it exists, else source; binary = dist/herald or fail; source = bun src/main.ts. */
  herald: "auto" | "binary" | "source";
  /** `signed`, `redirect`: how many times the compared cases alternate (--rounds, default 1); medians are reported. */
  rounds?: number;
  /** `webhooks`: events committed in the backlog case (--events, default 5000). */
  events?: number;
  /** `credit`: signed credits measured per case (--credits, default 20000). */
  credits?: number;
  /** `build-flags`: cold starts timed per variant (--starts, default 5); the table shows their median. */
  starts?: number;
  /** The storage engine herald runs on (--engine, default sqlite; postgres = a throwaway cluster, bench/engines.ts). */
  engine?: "sqlite" | "postgres";
  /** On postgres: herald instances on the one database (--instances, default 1). */
  instances?: number;
  /** The size of a benchmark's seeded history (--rows); each benchmark has its own default and meaning. */
  rows?: number;
  /** `http`: herald's LOG_LEVEL (--log-level, default warn; info writes a JSON line a request, as production does). */
  logLevel?: "warn" | "info";
}

export class UsageError extends Error {}

// ---------------------------------------------------------------------------------------------- results

export interface CaseResult {
  case: string;
  url: string;
  requests_per_sec: number;
  p50_ms: number;
  p99_ms: number;
  /** wrk's "Non-2xx or 3xx responses": it counts every status >= 400. */
  non_2xx: number;
  /** Socket errors: connect + read + write + timeout. */
  errors: number;
  requests: number;
  /** Share of all cores other processes used during the measured wrk run (see WrkResult); null/absent if unknown. */
  other_cpu_share?: number | null;
  /** Server CPU µs per request during the measured run (see WrkResult); null/absent if unknown. */
  server_cpu_us_per_request?: number | null;
  /** Of server_cpu_us_per_request, PostgreSQL's processes' share (see WrkResult); null/absent on SQLite. */
  database_cpu_us_per_request?: number | null;
  /** This case's req/s over the baseline's, measured in the same run; 1 for the baseline itself. */
  ratio_vs_baseline: number | null;
}

export interface BenchReport {
  benchmark: string;
  description: string;
  /** Where herald ran: the engine, how many instances, how the load reached them (bench/engines.ts); printed under the header. */
  topology?: string;
  results: CaseResult[];
  /** Things seen along the way worth a human's eye (dropped log rows, non-2xx, unclean exits …). */
  notes: string[];
  /** Derived figures printed under the table (e.g. the signed/unsigned ratio); in the JSON as `summary`. */
  summary?: string[];
  /** Named ratios for the JSON report (e.g. signed_vs_unsigned). */
  ratios?: Record<string, number | null>;
  /** Problems that make the numbers invalid (e.g. signed requests answered non-2xx): printed, and the run exits 1. */
  errors?: string[];
}

export interface Benchmark {
  name: string;
  description: string;
  run(opts: BenchOptions): Promise<BenchReport>;
}

/** Progress goes to stderr so that `--json` leaves stdout clean. */
export const progress = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

// ---------------------------------------------------------------------------------------------- wrk

export interface WrkResult {
  requests_per_sec: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  requests: number;
  /**
   * Share of all cores used during the run by processes other than this harness, its servers and wrk (from
   * /proc; null off Linux). On a shared machine this says whether something else took CPU mid-run.
   */
  other_cpu_share: number | null;
  /**
   * CPU time (user + system, µs) the harness's child processes other than wrk — i.e. the server(s) under test —
   * used during the run, per completed request (from /proc; null off Linux). It moves less than req/s when
   * other work shares the cores (that work still slows each instruction through shared caches and cores).
   */
  server_cpu_us_per_request: number | null;
  /**
   * Of server_cpu_us_per_request, the part PostgreSQL's processes used (postmaster, backends, writers); null when no
   * cluster runs. On 2 shared cores, 2,000,000 ÷ this is a ceiling no server in front of that database can pass.
   */
  database_cpu_us_per_request: number | null;
}

// Jiffies (USER_HZ, 100/s on Linux) of the whole machine and of one process, to tell our CPU from everyone else's.
function machineJiffies(): { busy: number; total: number } | null {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
  } catch {
    return null;
  }
}
/** A process's CPU time so far (utime + stime) in jiffies of 10 ms; 0 off Linux or once it is gone. */
export function processJiffies(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
  } catch {
    return 0;
  }
}
/** The pids serving the measured requests: the harness's children (servers, wrk) and the registered outside ones. */
const databasePids = () => [...serverPids].flatMap((list) => list());

/** PostgreSQL's processes' CPU so far (jiffies by pid), for databaseJiffiesSince; empty when no cluster runs. */
export const databaseCpu = (): Map<number, number> => new Map(databasePids().map((pid) => [pid, processJiffies(pid)]));

/** PostgreSQL's CPU since `before` (databaseCpu), in jiffies; a backend started meanwhile counts from zero. */
export const databaseJiffiesSince = (before: Map<number, number>): number =>
  databasePids().reduce((sum, pid) => sum + Math.max(0, processJiffies(pid) - (before.get(pid) ?? 0)), 0);
const servingPids = () => [...children].map((c) => c.pid).concat(databasePids());
const ourJiffies = () => servingPids().reduce((sum, pid) => sum + processJiffies(pid), processJiffies(process.pid));

export function findWrk(): string {
  const found = Bun.which("wrk");
  if (!found) {
    process.stderr.write("wrk not found on PATH; install wrk: apt-get install -y wrk\n");
    process.exit(1);
  }
  return found;
}

const TIME_UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDurationMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  if (!m) throw new Error(`unrecognised wrk time ${JSON.stringify(text)}`);
  return Number((Number(m[1]) * TIME_UNIT_MS[m[2]!]!).toFixed(4));
}

/** Parses `wrk --latency` output. Throws if a figure the report needs is missing. */
export function parseWrk(out: string): Omit<WrkResult, "other_cpu_share" | "server_cpu_us_per_request" | "database_cpu_us_per_request"> {
  const num = (re: RegExp) => {
    const m = re.exec(out);
    return m ? Number(m[1]) : null;
  };
  const percentile = (p: string) => {
    const m = new RegExp(`^\\s*${p}%\\s+(\\S+)\\s*$`, "m").exec(out);
    return m ? parseDurationMs(m[1]!) : null;
  };
  const rps = num(/^Requests\/sec:\s+([\d.]+)/m);
  const p50 = percentile("50");
  const p99 = percentile("99");
  const requests = num(/^\s*(\d+) requests in /m);
  if (rps === null || p50 === null || p99 === null || requests === null) {
    throw new Error(`could not parse wrk output:\n${out}`);
  }
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socket ? socket.slice(1, 5).reduce((sum, n) => sum + Number(n), 0) : 0;
  return { requests_per_sec: rps, p50_ms: p50, p99_ms: p99, non_2xx: num(/Non-2xx or 3xx responses:\s+(\d+)/) ?? 0, errors, requests };
}

/**
 * One wrk run, killed if it overruns its duration by more than 15 s. `headers` go on every request (wrk -H);
 * `script` is a Lua file for wrk -s (a request generator, or the spread over instances of bench/engines.ts).
 */
export async function runWrk(
  url: string,
  o: { durationSeconds: number; connections: number; threads: number },
  headers: Record<string, string> = {},
  script?: string,
): Promise<WrkResult> {
  const threads = Math.max(1, Math.min(o.threads, o.connections));
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);
  const scriptArgs = script ? ["-s", script] : [];
  const args = [findWrk(), "--latency", "-t", String(threads), "-c", String(o.connections), "-d", `${o.durationSeconds}s`, ...headerArgs, ...scriptArgs, url];
  const machineBefore = machineJiffies();
  const oursBefore = ourJiffies();
  const serversBefore = new Map(servingPids().map((pid) => [pid, processJiffies(pid)]));
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  children.add(proc);
  const killer = setTimeout(() => proc.kill("SIGKILL"), (o.durationSeconds + 15) * 1000);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  children.delete(proc);
  if (code !== 0) throw new Error(`wrk exited with ${code}: ${err || out}`);
  const machineAfter = machineJiffies();
  const usage = proc.resourceUsage();
  const wrkJiffies = usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 10_000 : 0;
  let other: number | null = null;
  if (machineBefore && machineAfter && machineAfter.total > machineBefore.total) {
    const others = machineAfter.busy - machineBefore.busy - (ourJiffies() - oursBefore) - wrkJiffies;
    other = Number(Math.max(0, others / (machineAfter.total - machineBefore.total)).toFixed(3));
  }
  // Servers that started during the run (a PostgreSQL backend for a new pool connection) count from zero.
  const serverJiffies = servingPids()
    .filter((pid) => pid !== proc.pid)
    .reduce((sum, pid) => sum + Math.max(0, processJiffies(pid) - (serversBefore.get(pid) ?? 0)), 0);
  const database = databasePids();
  const databaseJiffies = database.reduce((sum, pid) => sum + Math.max(0, processJiffies(pid) - (serversBefore.get(pid) ?? 0)), 0);
  const parsed = parseWrk(out);
  const usPer = (jiffies: number) => (machineBefore && parsed.requests > 0 ? Number(((jiffies * 10_000) / parsed.requests).toFixed(2)) : null);
  return {
    ...parsed,
    other_cpu_share: other,
    server_cpu_us_per_request: usPer(serverJiffies),
    database_cpu_us_per_request: database.length ? usPer(databaseJiffies) : null,
  };
}

/**
 * Warm up (results discarded), then measure. `headers`, when given, is called right before each wrk run (the
 * warmup and the measurement), so that time-limited headers such as a request signature are fresh for each.
 */
export async function measure(label: string, url: string, opts: BenchOptions, headers?: () => Record<string, string>, script?: string): Promise<CaseResult> {
  if (opts.warmupSeconds > 0) {
    progress(`${label}: warmup ${opts.warmupSeconds}s`);
    await runWrk(url, { ...opts, durationSeconds: opts.warmupSeconds }, headers?.(), script);
  }
  progress(`${label}: measuring ${opts.durationSeconds}s, ${opts.connections} connections, ${opts.threads} wrk threads`);
  const r = await runWrk(url, opts, headers?.(), script);
  return { case: label, url, ...r, ratio_vs_baseline: null };
}

/** The median of a non-empty list. */
export const median = (xs: number[]): number => {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** One row for several rounds of a case: the median of each figure, the sum of the counts. */
export function combine(label: string, runs: CaseResult[]): CaseResult {
  if (runs.length === 1) return runs[0]!;
  const med = (f: (r: CaseResult) => number | null | undefined) => {
    const xs = runs.map(f).filter((x): x is number => typeof x === "number");
    return xs.length ? Number(median(xs).toFixed(4)) : null;
  };
  return {
    case: `${label} (median of ${runs.length})`,
    url: runs[0]!.url,
    requests_per_sec: med((r) => r.requests_per_sec)!,
    p50_ms: med((r) => r.p50_ms)!,
    p99_ms: med((r) => r.p99_ms)!,
    non_2xx: runs.reduce((n, r) => n + r.non_2xx, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    requests: runs.reduce((n, r) => n + r.requests, 0),
    ratio_vs_baseline: null,
    other_cpu_share: runs.reduce<number | null>((m, r) => (typeof r.other_cpu_share === "number" ? Math.max(m ?? 0, r.other_cpu_share) : m), null),
    server_cpu_us_per_request: med((r) => r.server_cpu_us_per_request),
    database_cpu_us_per_request: med((r) => r.database_cpu_us_per_request),
  };
}

/** Fills ratio_vs_baseline (req/s) for every result against the named baseline case. */
export function withRatios(results: CaseResult[], baselineCase: string): CaseResult[] {
  const base = results.find((r) => r.case === baselineCase);
  return results.map((r) => ({
    ...r,
    ratio_vs_baseline: base && base.requests_per_sec > 0 ? Number((r.requests_per_sec / base.requests_per_sec).toFixed(3)) : null,
  }));
}

// ---------------------------------------------------------------------------------------------- report

function machine() {
  const list = cpus();
  return { cpus: list.length, cpu_model: list[0]?.model.trim() ?? "unknown", bun: Bun.version, platform: `${process.platform}-${process.arch}` };
}

/** Share of all cores busy over `ms`, from /proc/stat (null off Linux): other work on a 2-core box moves these
 * numbers more than anything we change, so every report says how idle the machine was before it began. */
export async function busyCpuShare(ms = 1000): Promise<number | null> {
  const sample = async () => {
    const line = (await Bun.file("/proc/stat").text()).split("\n")[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (f[3] ?? 0) + (f[4] ?? 0);
    return { idle, total: f.reduce((a, b) => a + b, 0) };
  };
  try {
    const a = await sample();
    await Bun.sleep(ms);
    const b = await sample();
    return b.total > a.total ? 1 - (b.idle - a.idle) / (b.total - a.total) : null;
  } catch {
    return null;
  }
}

const fmtMs = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

/** The report as a table (or JSON); `wrk`: whether the benchmark ran wrk, whose settings the header then names. */
export function printReport(report: BenchReport, opts: BenchOptions, command: string, startedAt: Date, busyBefore: number | null, wrk = true): void {
  const notes = [...report.notes];
  if (busyBefore !== null && busyBefore > 0.1) {
    notes.push(`the cores were ${(busyBefore * 100).toFixed(0)}% busy before the run began: something else is running, so these numbers are low`);
  }
  for (const r of report.results) {
    if (r.other_cpu_share !== null && r.other_cpu_share !== undefined && r.other_cpu_share > 0.05) {
      notes.push(`during "${r.case}", other processes used ${(r.other_cpu_share * 100).toFixed(0)}% of the cores: that case's numbers are low`);
    }
  }
  const meta = {
    date: startedAt.toISOString(),
    command,
    machine: { ...machine(), cpu_busy_before_start: busyBefore === null ? null : Number(busyBefore.toFixed(2)) },
    settings: wrk ? { duration_s: opts.durationSeconds, warmup_s: opts.warmupSeconds, connections: opts.connections, wrk_threads: opts.threads } : null,
  };
  if (opts.json) {
    process.stdout.write(JSON.stringify({ ...meta, ...report, notes }, null, 2) + "\n");
    return;
  }
  const rows = report.results.map((r) => [
    r.case,
    Math.round(r.requests_per_sec).toLocaleString("en-US"),
    fmtMs(r.p50_ms),
    fmtMs(r.p99_ms),
    String(r.non_2xx),
    String(r.errors),
    r.ratio_vs_baseline === null ? "-" : `${r.ratio_vs_baseline.toFixed(2)}×`,
  ]);
  const head = ["case", "req/s", "p50", "p99", "non-2xx", "errors", "vs baseline"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const m = meta.machine;
  const out = [
    `${report.benchmark}: ${report.description}`,
    `${meta.date}  ${m.cpus} × ${m.cpu_model}  cpu busy before ${m.cpu_busy_before_start === null ? "?" : `${(m.cpu_busy_before_start * 100).toFixed(0)}%`}  bun ${m.bun}  ${wrk ? `wrk -c${opts.connections} -t${opts.threads} -d${opts.durationSeconds}s (after ${opts.warmupSeconds}s warmup)` : "no wrk"}`,
    "",
    line(head),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map(line),
  ];
  if (report.topology) out.splice(2, 0, `topology: ${report.topology}`);
  if (report.summary?.length) out.push("", ...report.summary);
  if (notes.length) out.push("", ...notes.map((n) => `note: ${n}`));
  if (report.errors?.length) out.push("", ...report.errors.map((e) => `ERROR: ${e}`));
  process.stdout.write(out.join("\n") + "\n");
}
