// signed: what partner-request verification costs. Three cases, one after the other (never together: client and
// servers share the cores), each after the same warmup, all sent byte-identical requests (the same X-Partner-*
// headers, re-signed before every wrk run):
//   (a) herald (`herald serve`, a child process), a correctly signed GET /api/partner/capabilities;
//   (b) the same route's work without the partner-auth macro: bench/unsigned-server.ts (real openContext, real
//       httpCore, a copy of the handler, a fixed actor), so a/b is the cost of verification;
//   (c) the raw Bun.serve JSON baseline.
// On PostgreSQL (--engine postgres) (a) and (b) each run as --instances processes over a database of their own on
// one cluster, and wrk's load is spread over the instances (bench/engines.ts).
// A GET needs no nonce, and a signature stays valid for ±SIGNATURE_SKEW_SECONDS (300 s), so one signature per wrk
// run is enough as long as a run is well under 300 s. The partner rate limit is switched off
// (RATE_LIMIT_PARTNER_PER_MIN=0) in both servers: 6000 requests per minute per key would throttle the run.
import { join } from "node:path";
import { signRequest } from "../src/client/sign";
import { heraldCli, measureOn, openEngine, spreadNote, startHeraldLikes, startHeralds, stopAll, type BenchDatabase } from "./engines";
import {
  combine,
  median,
  heraldLaunch,
  inspectDatabase,
  logLines,
  measure,
  progress,
  readMetric,
  ROOT,
  startBaseline,
  summariseLog,
  tempDir,
  UsageError,
  withRatios,
  type Benchmark,
  type BenchOptions,
  type CaseResult,
  type HeraldLaunch,
  type RunningServer,
} from "./support";

const PATH = "/api/partner/capabilities";
const SIGNED = `herald GET ${PATH}, signed`;
const UNSIGNED = "same route, no verification";
const BASELINE = "raw Bun.serve JSON";
/** Verification must cost under 10% of throughput. */
/** Issue 29: a signed partner GET at 0.95 of the same route unsigned or better. */
const TARGET_RATIO = 0.95;
/** Signatures are valid for ±300 s (the default SIGNATURE_SKEW_SECONDS, which the harness does not change). */
const MAX_DURATION_S = 240;

/** Both servers run with this on top of herald's bench environment (see startHerald). */
const SERVER_ENV = { RATE_LIMIT_PARTNER_PER_MIN: "0", METRICS_PUBLIC: "1" };

interface BenchKey {
  key_id: string;
  secret: string;
}

/** `herald keys create --partner Bench --mode live --scopes read --json` over the database (which it migrates). */
async function createKey(db: BenchDatabase, launch: HeraldLaunch): Promise<BenchKey> {
  const out = await heraldCli(db, launch, ["keys", "create", "--partner", "Bench", "--mode", "live", "--scopes", "read", "--json"], SERVER_ENV);
  let parsed: Partial<BenchKey>;
  try {
    parsed = JSON.parse(out) as Partial<BenchKey>;
  } catch {
    throw new Error(`herald keys create --json did not print JSON: ${out.slice(0, 200)}`);
  }
  if (typeof parsed.key_id !== "string" || typeof parsed.secret !== "string") throw new Error("herald keys create --json printed no key_id/secret");
  return { key_id: parsed.key_id, secret: parsed.secret };
}

/** Signs GET /api/partner/capabilities at the current time (no nonce: a GET needs none). */
function signedHeaders(key: BenchKey): Record<string, string> {
  const { headers } = signRequest({ keyId: key.key_id, secret: key.secret, method: "GET", target: PATH });
  return Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/** One request as wrk will send it; resolves to the status and parsed body (null if not JSON). */
async function probe(server: RunningServer, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const res = await fetch(server.baseUrl + PATH, { headers, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: res.status, body: null };
  }
}

const describeFailure = (p: { status: number; body: Record<string, unknown> | null }) =>
  `HTTP ${p.status}${p.body ? ` ${String(p.body.error ?? "")}: ${String(p.body.message ?? JSON.stringify(p.body).slice(0, 200))}` : ""}`;

/** The capabilities answer without the fields that differ by key (each server has its own key). */
const comparable = (body: Record<string, unknown> | null) => (body ? JSON.stringify({ ...body, key_id: "*" }) : "null");

function checkDuration(opts: BenchOptions): void {
  if (opts.durationSeconds > MAX_DURATION_S || opts.warmupSeconds > MAX_DURATION_S) {
    throw new UsageError(`signed: --duration must be at most ${MAX_DURATION_S} s: one signature serves a whole wrk run and stays valid for only ±300 s`);
  }
}

const signed: Benchmark = {
  name: "signed",
  description: `signed GET ${PATH} on herald vs the same route without verification vs a raw Bun.serve JSON endpoint`,
  async run(opts) {
    checkDuration(opts);
    const rounds = opts.rounds ?? 1;
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [
      `herald ran from ${launch.mode}; the unsigned server always runs from source (bun bench/unsigned-server.ts)`,
      "RATE_LIMIT_PARTNER_PER_MIN=0 in both servers (the default 6000/min per key would throttle the run)",
      "all three cases got the same X-Partner-* headers, re-signed before every wrk run (warmup and measurement)",
    ];
    if (rounds > 1)
      notes.push(
        `${rounds} rounds, each signed then unsigned (each after its warmup); the table shows each figure's median over the rounds, a/b the median of the per-round ratios`,
      );
    if (launch.warning) notes.push(launch.warning);
    if (launch.mode.startsWith("binary"))
      notes.push("herald ran from the binary but the unsigned server from source: a/b mixes the two; pass --source for a like-for-like ratio");
    const errors: string[] = [];
    const dir = tempDir("signed");
    const engine = await openEngine(opts);
    const signedRuns: CaseResult[] = [];
    const unsignedRuns: CaseResult[] = [];
    let baselineResult: CaseResult | undefined;
    try {
      const heraldDb = await engine.database(join(dir.path, "herald"));
      const unsignedDb = await engine.database(join(dir.path, "unsigned"));
      progress("creating a live key (read scope) with `herald keys create` in each server's database");
      const key = await createKey(heraldDb, launch);
      const unsignedKey = await createKey(unsignedDb, launch);
      const headers = () => signedHeaders(key);

      // Both servers are started up front and measured in turn; the one not being measured sits idle.
      progress(`starting ${engine.instances} herald instance(s) from ${launch.mode} on ${engine.kind}`);
      const heralds = await startHeralds(heraldDb, launch, engine.instances, SERVER_ENV);
      const herald = heralds[0]!;
      let unsigned: RunningServer[] = [];
      try {
        // Every instance must accept the request before the run; the first one's answer is the reference body.
        let first: Awaited<ReturnType<typeof probe>> | undefined;
        for (const h of heralds) {
          const answer = await probe(h, headers());
          if (answer.status !== 200 || answer.body?.success !== true) {
            throw new Error(`herald rejected a correctly signed GET ${PATH} before the run: ${describeFailure(answer)}. Nothing was measured.`);
          }
          first ??= answer;
        }
        progress("starting the unsigned server (bench/unsigned-server.ts)");
        unsigned = await startHeraldLikes("unsigned", join(ROOT, "bench", "unsigned-server.ts"), unsignedDb, PATH, engine.instances, {
          ...SERVER_ENV,
          BENCH_KEY_ID: unsignedKey.key_id,
        });
        const same = await probe(unsigned[0]!, headers());
        if (same.status !== 200 || same.body?.success !== true)
          throw new Error(`the unsigned server answered ${describeFailure(same)} before the run. Nothing was measured.`);
        if (comparable(same.body) !== comparable(first!.body)) {
          errors.push(
            "the unsigned server's capabilities body differs from herald's (beyond key_id): the two cases do not do the same work; check bench/unsigned-server.ts against src/partner/routes.ts",
          );
        }

        for (let round = 1; round <= rounds; round++) {
          if (rounds > 1) progress(`round ${round} of ${rounds}`);
          // (a) herald, signed
          let lastHeaders: Record<string, string> = {};
          const a = await measureOn(SIGNED, heralds, PATH, opts, () => (lastHeaders = headers()));
          signedRuns.push(a);
          if (a.non_2xx > 0) {
            const again = await probe(herald, lastHeaders);
            errors.push(
              `herald answered ${a.non_2xx.toLocaleString("en-US")} of ${a.requests.toLocaleString("en-US")} signed requests with a non-2xx status (a request with the run's own headers now gets ${describeFailure(again)}): these were not verified-and-served requests, so the signed figures and a/b are invalid`,
            );
          }
          // (b) the same route's work, unverified
          unsignedRuns.push(await measureOn(UNSIGNED, unsigned, PATH, opts, headers));
        }
        const counts = await Promise.all(heralds.map((h) => readMetric(h, "herald_http_requests_total", `{method="GET",route="${PATH}",status="200"}`)));
        if (counts.some((c) => c !== null))
          notes.push(
            `herald counted ${counts.reduce<number>((n, c) => n + (c ?? 0), 0).toLocaleString("en-US")} signed GET ${PATH} 200s (probe${opts.warmupSeconds > 0 ? " + warmup" : ""} + measured run${rounds > 1 ? "s" : ""})`,
          );
      } finally {
        notes.push(...(await stopAll(heralds)));
        notes.push(...(await stopAll(unsigned, "unsigned server")));
      }

      // (c) the baseline
      progress("starting the baseline server");
      const baseline = await startBaseline(dir.path);
      try {
        baselineResult = await measure(BASELINE, `${baseline.baseUrl}/`, opts, headers);
      } finally {
        await baseline.stop();
      }

      for (const [name, db, servers] of [
        ["herald", heraldDb, heralds],
        ["unsigned server", unsignedDb, unsigned],
      ] as const) {
        const store = await db.store();
        const rows = (await store.get<{ n: number }>("SELECT count(*) AS n FROM request_log"))!.n;
        const bytes = db.kind === "sqlite" ? inspectDatabase(join(db.dir, "herald.db")).bytes : await store.sizeBytes();
        await db.close();
        notes.push(`${name}: request_log has ${rows.toLocaleString("en-US")} rows after shutdown; database ${(bytes / 1024 / 1024).toFixed(1)} MiB`);
        for (const server of servers) {
          const logged = await logLines(server.logPath);
          if (logged.length)
            notes.push(`${name} wrote ${logged.length}${logged.length === 200 ? "+" : ""} lines to stdout/stderr at LOG_LEVEL=warn: ${summariseLog(logged)}`);
        }
      }
    } finally {
      await engine.close();
      dir.remove();
    }

    const results: CaseResult[] = [];
    const a = signedRuns.length ? combine(SIGNED, signedRuns) : undefined;
    const b = unsignedRuns.length ? combine(UNSIGNED, unsignedRuns) : undefined;
    for (const r of [a, b, baselineResult]) if (r) results.push(r);
    for (const r of results) if (r.non_2xx > 0 || r.errors > 0) notes.push(`${r.case}: ${r.non_2xx} non-2xx responses, ${r.errors} socket errors`);

    // a/b: the median of the per-round ratios (each pair measured back to back, so under the same conditions).
    const pairs = signedRuns.map((s, i) => ({ s, u: unsignedRuns[i] })).filter((p): p is { s: CaseResult; u: CaseResult } => !!p.u && p.u.requests_per_sec > 0);
    const perRound = pairs.map((p) => p.s.requests_per_sec / p.u.requests_per_sec);
    const ratio = perRound.length ? Number(median(perRound).toFixed(3)) : null;
    const cpuPairs = pairs.filter((p) => p.s.server_cpu_us_per_request && p.u.server_cpu_us_per_request);
    const cpuRatio = cpuPairs.length ? Number(median(cpuPairs.map((p) => p.u.server_cpu_us_per_request! / p.s.server_cpu_us_per_request!)).toFixed(3)) : null;
    const summary: string[] = [];
    if (a && b && ratio !== null) {
      const costUs = (1e6 / a.requests_per_sec - 1e6 / b.requests_per_sec).toFixed(1);
      const verdict = errors.length ? "UNKNOWN (the run is invalid, see ERROR)" : ratio >= TARGET_RATIO ? "MET" : "NOT MET";
      summary.push(
        `signed ÷ unsigned (a/b): ${ratio.toFixed(2)}× — verification costs ${((1 - ratio) * 100).toFixed(1)}% of throughput (≈${costUs} µs of wall time per request at this load); target a/b ≥ ${TARGET_RATIO.toFixed(2)}: ${verdict}`,
      );
      const pct = (x: number | null | undefined) => (typeof x === "number" ? `${(x * 100).toFixed(0)}%` : "?");
      if (perRound.length > 1) {
        summary.push(
          `a/b per round (other processes' share of the cores during signed/unsigned): ${pairs.map((p, i) => `${perRound[i]!.toFixed(2)} (${pct(p.s.other_cpu_share)}/${pct(p.u.other_cpu_share)})`).join(", ")}`,
        );
      }
      summary.push(
        `latency signed vs unsigned: p50 ${a.p50_ms.toFixed(2)} vs ${b.p50_ms.toFixed(2)} ms, p99 ${a.p99_ms.toFixed(2)} vs ${b.p99_ms.toFixed(2)} ms`,
      );
      const ca = a.server_cpu_us_per_request;
      const cb = b.server_cpu_us_per_request;
      if (ca && cb && cpuRatio !== null) {
        summary.push(
          `server CPU per request: signed ${ca.toFixed(1)} µs, unsigned ${cb.toFixed(1)} µs → verification ≈ ${(ca - cb).toFixed(1)} µs of CPU per request; as a throughput ratio for a CPU-bound server, unsigned ÷ signed CPU = ${cpuRatio.toFixed(2)}× (less sensitive than req/s to other work on the cores, but not immune)`,
        );
      }
    }
    return {
      benchmark: "signed",
      description: signed.description,
      topology: engine.topology(
        `herald and the unsigned server each over a database of their own, ${engine.instances === 1 ? "one process each" : `${engine.instances} processes each`}; ${spreadNote(engine.instances, opts)}; the baseline is one process`,
      ),
      results: withRatios(results, BASELINE),
      notes,
      summary,
      ratios: { signed_vs_unsigned: ratio, signed_vs_unsigned_by_cpu: cpuRatio, target_signed_vs_unsigned: TARGET_RATIO },
      errors,
    };
  },
};

export default signed;
