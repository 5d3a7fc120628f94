// http: what Herald's HTTP stack (Elysia, request id, rate-limit lookup, metrics, batched request log) costs
// over the least a Bun server can do. Against a raw Bun.serve JSON endpoint (the baseline), herald answers:
//   - GET /healthz, a probe route: the whole stack but no request-log row (probes are counted in /metrics only);
//   - GET /api/public/system-status/policy, a public route that reads nothing from the database: the same stack
//     plus one request-log row per request (buffered, written in batches of up to 1000), the write that differs
//     between the engines.
// All are child processes, measured one after the other (never together: client and servers share the cores).
// On PostgreSQL (--engine postgres) --instances herald processes share one database and wrk's load is spread
// over them (bench/engines.ts).
import { join } from "node:path";
import { measureOn, openEngine, spreadNote, startHeralds, stopAll } from "./engines";
import {
  combine,
  median,
  heraldLaunch,
  inspectDatabase,
  logLines,
  measure,
  progress,
  readMetric,
  startBaseline,
  summariseLog,
  tempDir,
  withRatios,
  type Benchmark,
  type CaseResult,
  type RunningServer,
} from "./support";

const BASELINE = "raw Bun.serve JSON";
const PROBE = "herald GET /healthz";
/** Issue 29: the cheapest route at 0.70 of raw Bun.serve or better. */
const HEALTHZ_TARGET = 0.7;
const LOGGED_PATH = "/api/public/system-status/policy";
const POLICY = `herald GET ${LOGGED_PATH} (request-logged)`;

/** A counter summed over every instance's /metrics (null when none answers). */
async function metricSum(servers: RunningServer[], name: string, labels: string): Promise<number | null> {
  const values = await Promise.all(servers.map((s) => readMetric(s, name, labels)));
  return values.some((v) => v !== null) ? values.reduce<number>((sum, v) => sum + (v ?? 0), 0) : null;
}

const http: Benchmark = {
  name: "http",
  description: `GET /healthz and GET ${LOGGED_PATH} (one request-log row each) on herald vs a raw Bun.serve JSON endpoint`,
  async run(opts) {
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [
      `herald ran from ${launch.mode}`,
      "RATE_LIMIT_PUBLIC_API_PER_MIN=0 for herald (the per-IP limit would answer 429 to a one-IP load)",
    ];
    const logLevel = opts.logLevel ?? "warn";
    if (logLevel === "info")
      notes.push("LOG_LEVEL=info for herald: a JSON line on stdout for every request, as in production (written in batches, src/log.ts)");
    if (launch.warning) notes.push(launch.warning);
    const dir = tempDir("http");
    const engine = await openEngine(opts);
    const results: CaseResult[] = [];
    const summary: string[] = [];
    let ratios: Record<string, number> = {};
    try {
      const rounds = opts.rounds ?? 1;
      if (rounds > 1)
        notes.push(
          `${rounds} rounds, each raw then herald's two routes (each after its warmup); the table shows each figure's median over the rounds, the ratios are the medians of the per-round ratios`,
        );
      progress("starting the baseline server");
      const baseline = await startBaseline(dir.path);
      const db = await engine.database(join(dir.path, "herald"));
      progress(`starting ${engine.instances} herald instance(s) from ${launch.mode} on ${engine.kind}`);
      const heralds = await startHeralds(db, launch, engine.instances, { METRICS_PUBLIC: "1", RATE_LIMIT_PUBLIC_API_PER_MIN: "0", LOG_LEVEL: logLevel });
      const raw: CaseResult[] = [];
      const probes: CaseResult[] = [];
      const policies: CaseResult[] = [];
      let logged = 0;
      try {
        const warm = opts.warmupSeconds > 0 ? "warmup + " : "";
        // Both servers are started up front and measured in turn; the one not being measured sits idle.
        for (let round = 1; round <= rounds; round++) {
          if (rounds > 1) progress(`round ${round} of ${rounds}`);
          raw.push(await measure(BASELINE, `${baseline.baseUrl}/`, opts));
          probes.push(await measureOn(PROBE, heralds, "/healthz", opts));
          policies.push(await measureOn(POLICY, heralds, LOGGED_PATH, opts));
        }
        logged = policies.reduce((n, r) => n + r.requests, 0);
        const pending = await metricSum(heralds, "herald_request_log_pending", "");
        if (pending !== null && pending > 0) notes.push(`request log: ${pending} rows still buffered right after the run`);
        const healthz = await metricSum(heralds, "herald_http_requests_total", '{method="GET",route="/healthz",status="200"}');
        if (healthz !== null) notes.push(`herald counted ${healthz.toLocaleString("en-US")} GET /healthz 200s (${warm}measured runs)`);
      } finally {
        notes.push(...(await stopAll(heralds)));
        await baseline.stop();
      }
      const ratioOf = (runs: CaseResult[]) => Number(median(runs.map((r, i) => r.requests_per_sec / raw[i]!.requests_per_sec)).toFixed(4));
      const spread = (runs: CaseResult[]) =>
        runs.length > 1 ? ` (rounds: ${runs.map((r, i) => (r.requests_per_sec / raw[i]!.requests_per_sec).toFixed(2)).join(", ")})` : "";
      results.push(combine(BASELINE, raw), combine(PROBE, probes), combine(POLICY, policies));
      const healthzRatio = ratioOf(probes);
      const policyRatio = ratioOf(policies);
      ratios = { healthz_vs_raw: healthzRatio, policy_vs_raw: policyRatio };
      summary.push(
        `herald /healthz / raw Bun.serve JSON = ${healthzRatio.toFixed(2)}×${spread(probes)} (target ≥ ${HEALTHZ_TARGET.toFixed(2)}×)`,
        `herald ${LOGGED_PATH} (request-logged) / raw = ${policyRatio.toFixed(2)}×${spread(policies)}`,
      );
      // After shutdown every buffered row is written: the policy route's requests (warmup included) are all there.
      const store = await db.store();
      const rows = (await store.get<{ n: number }>("SELECT count(*) AS n FROM request_log"))!.n;
      const bytes = db.kind === "sqlite" ? inspectDatabase(join(db.dir, "herald.db")).bytes : await store.sizeBytes();
      await db.close();
      notes.push(
        `request_log after shutdown: ${rows.toLocaleString("en-US")} rows (the measured ${LOGGED_PATH} run alone completed ${logged.toLocaleString("en-US")}); database ${(bytes / 1024 / 1024).toFixed(1)} MiB`,
      );
      for (const h of heralds) {
        const lines = logLevel === "warn" ? await logLines(h.logPath) : [];
        if (lines.length)
          notes.push(`herald wrote ${lines.length}${lines.length === 200 ? "+" : ""} lines to stdout/stderr at LOG_LEVEL=warn: ${summariseLog(lines)}`);
      }
      for (const r of results) if (r.non_2xx > 0 || r.errors > 0) notes.push(`${r.case}: ${r.non_2xx} non-2xx responses, ${r.errors} socket errors`);
    } finally {
      await engine.close();
      dir.remove();
    }
    const withR = withRatios(results, results[0]?.case ?? BASELINE);
    // With rounds, each herald row's ratio is the median of the per-round ratios (the load on a shared machine moves
    // both servers of a round alike), not the ratio of the medians.
    if ((opts.rounds ?? 1) > 1 && withR.length === 3) {
      withR[1]!.ratio_vs_baseline = ratios.healthz_vs_raw ?? null;
      withR[2]!.ratio_vs_baseline = ratios.policy_vs_raw ?? null;
    }
    return {
      benchmark: "http",
      description: http.description,
      topology: engine.topology(`${spreadNote(engine.instances, opts)}; the baseline is one process`),
      results: withR,
      notes,
      summary,
      ratios,
    };
  },
};

export default http;
