// Benchmark dispatcher: bun run bench/run.ts <name> [--duration 10] [--connections 50] [--json] …
// (npm run bench -- <name> …). Each benchmark is a module in bench/ exporting a Benchmark as default.
import { parseArgs } from "node:util";
import { engineOption, fsyncOption, latencyOption, MAX_LATENCY_MS, topologyOf, type PostgresEngineOptions } from "./engines";
import { busyCpuShare, findWrk, printReport, UsageError, type Benchmark, type BenchOptions } from "./support";

// Add a benchmark: one line here, one module beside this file.
const BENCHMARKS: Record<string, () => Promise<{ default: Benchmark }>> = {
  http: () => import("./http"),
  signed: () => import("./signed"),
  webhooks: () => import("./webhooks"),
  credit: () => import("./credit"),
  holders: () => import("./holders"),
  redirect: () => import("./redirect"),
  transparency: () => import("./transparency"),
  messenger: () => import("./messenger"),
  "messenger-admin": () => import("./messenger-admin"),
  "ops-digest": () => import("./ops-digest"),
  "build-flags": () => import("./build-flags"),
  migrate: () => import("./migrate"),
  profile: () => import("./profile"),
  floors: () => import("./floors"),
  startup: () => import("./startup"),
  miniapp: () => import("./miniapp"),
  lighthouse: () => import("./lighthouse"),
  docs: () => import("./docs"),
  compression: () => import("./compression"),
  scale: () => import("./scale"),
};

/** The benchmarks that time something other than wrk's load: they run without it, and their report leaves its settings out. */
const WITHOUT_WRK = new Set(["startup", "credit", "miniapp", "lighthouse", "docs", "webhooks", "holders", "ops-digest", "migrate", "scale"]);

/** The benchmarks that run herald over a database, and so take --engine and --instances (bench/engines.ts). */
const ENGINE_BENCHMARKS = new Set([
  "http",
  "signed",
  "webhooks",
  "credit",
  "holders",
  "redirect",
  "transparency",
  "messenger",
  "messenger-admin",
  "ops-digest",
  "scale",
]);

const USAGE = `Usage: bun run bench/run.ts <name> [options]     (or: npm run bench -- <name> [options])

Benchmarks: ${Object.keys(BENCHMARKS).join(", ")}

Options:
  --duration N      seconds measured per case (default 10)
  --connections N   concurrent wrk connections (default 50)
  --threads N       wrk threads (default 2; capped at --connections)
  --warmup N        seconds of discarded warmup before each case (default 2)
  --binary          run herald from dist/herald (fail if it is missing)
  --source          run herald from source even if dist/herald exists
                    (default: dist/herald when it exists, else source)
  --json            print the report as JSON on stdout (progress stays on stderr)
  --events N        webhooks: events committed in the backlog case (default 5000; 4 deliveries each)
  --credits N       credit: signed credits measured per case (default 20000; --connections sets the concurrency)
  --rounds N        http, signed, redirect, floors: alternate the compared cases N times and report medians (default 1)
  --starts N        build-flags: cold starts timed per variant; miniapp, docs: page loads per case (median reported, default 5);
                    lighthouse: runs per page (median reported, default 5)
  --engine E        every benchmark but build-flags and migrate: sqlite (default) or postgres (a throwaway
                    cluster from Debian's package, bench/engines.ts)
  --instances N     with --engine postgres: herald instances sharing the database (1–4, default 1; holders: 1)
  --fsync on|off    with --engine postgres: on (default) = a durable cluster on disk with PostgreSQL's default
                    durability (each commit waits for its WAL flush); off = the tests' cluster (tmpfs, fsync off)
  --latency-ms X    with --engine postgres: herald (and a bare floor) reach PostgreSQL through bench/delay-proxy.ts,
                    which holds each chunk X/2 ms each way (0–${MAX_LATENCY_MS}, default 0 = direct); the added round
                    trip it really makes is measured and printed
  --pool N          with --engine postgres: DATABASE_POOL_MAX of each herald instance (1–100, default herald's 10);
                    credit's bare floor gets instances × N connections
  --log-level L     http: herald's LOG_LEVEL, warn (default) or info (production's default: a JSON line on stdout
                    for every request, written in batches)
  --rows N          the seeded history's size: migrate request_log rows (a tenth as many ledger rows; default
                    1000000), transparency examined rows (default 1000000), messenger-admin plays (default
                    1000000), ops-digest request_log rows (default 5000000), startup request_log rows
                    (default 1000000), holders fixture accounts
                    (one size instead of 100000 and 1000000)
  --sizes LIST      scale: the databases built, as row counts with k or m (default 10k,1m; 10m on request)
`;

function intOption(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

function parse(argv: string[]): { name: string | undefined; opts: BenchOptions & PostgresEngineOptions & { sizes?: string } } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      duration: { type: "string" },
      connections: { type: "string" },
      threads: { type: "string" },
      warmup: { type: "string" },
      binary: { type: "boolean" },
      source: { type: "boolean" },
      json: { type: "boolean" },
      events: { type: "string" },
      credits: { type: "string" },
      rounds: { type: "string" },
      starts: { type: "string" },
      engine: { type: "string" },
      rows: { type: "string" },
      instances: { type: "string" },
      fsync: { type: "string" },
      "latency-ms": { type: "string" },
      pool: { type: "string" },
      "log-level": { type: "string" },
      sizes: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (positionals.length > 1) throw new UsageError(`one benchmark at a time, got ${positionals.join(", ")}`);
  if (values.binary && values.source) throw new UsageError("--binary and --source exclude each other");
  const logLevel = values["log-level"];
  if (logLevel !== undefined && logLevel !== "warn" && logLevel !== "info")
    throw new UsageError(`--log-level must be warn or info, got ${JSON.stringify(logLevel)}`);
  return {
    name: positionals[0],
    opts: {
      durationSeconds: intOption(values.duration, "duration", 10, 1, 600),
      connections: intOption(values.connections, "connections", 50, 1, 10_000),
      threads: intOption(values.threads, "threads", 2, 1, 64),
      warmupSeconds: intOption(values.warmup, "warmup", 2, 0, 60),
      json: values.json === true,
      herald: values.binary ? "binary" : values.source ? "source" : "auto",
      events: intOption(values.events, "events", 5000, 1, 1_000_000),
      credits: intOption(values.credits, "credits", 20_000, 100, 200_000),
      rounds: intOption(values.rounds, "rounds", 1, 1, 20),
      starts: intOption(values.starts, "starts", 5, 1, 20),
      engine: values.engine === undefined ? undefined : engineOption(values.engine),
      instances: values.instances === undefined ? undefined : intOption(values.instances, "instances", 1, 1, 4),
      rows: values.rows === undefined ? undefined : intOption(values.rows, "rows", 1_000_000, 1_000, 10_000_000),
      // The PostgreSQL engine's options ride beside BenchOptions to openEngine() (bench/engines.ts).
      fsync: values.fsync === undefined ? undefined : fsyncOption(values.fsync),
      latencyMs: values["latency-ms"] === undefined ? undefined : latencyOption(values["latency-ms"]),
      pool: values.pool === undefined ? undefined : intOption(values.pool, "pool", 10, 1, 100),
      logLevel,
      // scale's own option, beside BenchOptions like the PostgreSQL engine's (bench/scale.ts parses it).
      sizes: values.sizes,
    },
  };
}

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { name, opts } = parsed;
  const load = name === undefined ? undefined : BENCHMARKS[name];
  if (!load) {
    process.stderr.write(
      `${name === undefined ? "bench: name a benchmark" : `bench: unknown benchmark ${JSON.stringify(name)}`}; available: ${Object.keys(BENCHMARKS).join(", ")}\n\n${USAGE}`,
    );
    return 2;
  }
  try {
    const engineFlags =
      opts.engine !== undefined || opts.instances !== undefined || opts.fsync !== undefined || opts.latencyMs !== undefined || opts.pool !== undefined;
    if (engineFlags && !ENGINE_BENCHMARKS.has(name!)) throw new UsageError(`${name} does not take --engine, --instances, --fsync, --latency-ms or --pool`);
    topologyOf(opts);
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n`);
    return 2;
  }
  if (opts.sizes !== undefined && name !== "scale") {
    process.stderr.write(`bench: ${name} does not take --sizes\n`);
    return 2;
  }
  if (opts.logLevel !== undefined && name !== "http") {
    process.stderr.write(`bench: ${name} does not take --log-level\n`);
    return 2;
  }
  if (!WITHOUT_WRK.has(name!)) findWrk(); // fail before starting any server
  const bench = (await load()).default;
  const startedAt = new Date();
  const busyBefore = await busyCpuShare(1000);
  try {
    const report = await bench.run(opts);
    printReport(report, opts, `bun run bench/run.ts ${process.argv.slice(2).join(" ")}`, startedAt, busyBefore, !WITHOUT_WRK.has(name!));
    if (report.errors?.length) {
      process.stderr.write(
        `bench: ${report.benchmark}: ${report.errors.length} error(s) make these numbers invalid:\n${report.errors.map((e) => `  ${e}`).join("\n")}\n`,
      );
      return 1;
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

process.exit(await main());
