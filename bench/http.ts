// http: what Herald's HTTP stack (Elysia, request id, rate-limit lookup, metrics, batched request log) costs
// over the least a Bun server can do. GET /healthz on herald against a raw Bun.serve JSON endpoint, both as
// child processes, measured one after the other (never together: client and servers share the cores).
import { join } from "node:path";
import {
  heraldLaunch,
  inspectDatabase,
  logLines,
  measure,
  progress,
  readMetric,
  startBaseline,
  startHerald,
  summariseLog,
  tempDir,
  withRatios,
  type Benchmark,
  type CaseResult,
} from "./support";

const BASELINE = "raw Bun.serve JSON";

const http: Benchmark = {
  name: "http",
  description: "GET /healthz on herald vs a raw Bun.serve JSON endpoint",
  async run(opts) {
    const launch = heraldLaunch(opts.herald);
    const notes: string[] = [`herald ran from ${launch.mode}`];
    if (launch.warning) notes.push(launch.warning);
    const dir = tempDir("http");
    const results: CaseResult[] = [];
    try {
      progress("starting the baseline server");
      const baseline = await startBaseline(dir.path);
      try {
        results.push(await measure(BASELINE, `${baseline.baseUrl}/`, opts));
      } finally {
        await baseline.stop();
      }

      progress(`starting herald from ${launch.mode}`);
      const herald = await startHerald(dir.path, launch, { METRICS_PUBLIC: "1" });
      let sent = 0;
      let exitCode: number | null = null;
      try {
        const warm = opts.warmupSeconds > 0;
        const result = await measure("herald GET /healthz", `${herald.baseUrl}/healthz`, opts);
        results.push(result);
        sent = result.requests;
        const pending = await readMetric(herald, "herald_request_log_pending");
        if (pending !== null && pending > 0) notes.push(`request log: ${pending} rows still buffered right after the run`);
        const counted = await readMetric(herald, "herald_http_requests_total", '{method="GET",route="/healthz",status="200"}');
        if (counted !== null) notes.push(`herald counted ${counted.toLocaleString("en-US")} GET /healthz 200s (${warm ? "warmup + " : ""}measured run)`);
      } finally {
        const started = Date.now();
        exitCode = await herald.stop();
        notes.push(`herald stopped on SIGTERM in ${Date.now() - started} ms, exit ${exitCode === null ? "KILLED after grace" : exitCode}`);
      }
      const db = inspectDatabase(join(dir.path, "herald.db"));
      notes.push(
        `request_log after shutdown: ${db.rows === null ? "unreadable" : db.rows.toLocaleString("en-US")} rows (the measured run alone completed ${sent.toLocaleString("en-US")}); database ${(db.bytes / 1024 / 1024).toFixed(1)} MiB`,
      );
      const logged = await logLines(herald.logPath);
      if (logged.length)
        notes.push(`herald wrote ${logged.length}${logged.length === 200 ? "+" : ""} lines to stdout/stderr at LOG_LEVEL=warn: ${summariseLog(logged)}`);
      for (const r of results) if (r.non_2xx > 0 || r.errors > 0) notes.push(`${r.case}: ${r.non_2xx} non-2xx responses, ${r.errors} socket errors`);
    } finally {
      dir.remove();
    }
    return { benchmark: "http", description: http.description, results: withRatios(results, BASELINE), notes };
  },
};

export default http;
