// The `scale` benchmark's prober (bench/scale.ts), its own process so that nothing the harness does (reading a large
// answer, signing) delays a probe: GET <url> every --interval-ms (one probe in flight at a time: a probe that is late
// is sent as soon as the previous one answers, and the ticks it missed are skipped), each answer's send time (Unix
// ms, fractional) and latency recorded. Bounded: at most --max-seconds, and as many probes as fit in it. Stops on
// SIGTERM or at the bound, writes its samples to --out as JSON and exits.
//   bun bench/scale-prober.ts --url http://127.0.0.1:PORT/healthz --out FILE [--interval-ms 20] [--max-seconds 1800]
import { parseArgs } from "node:util";

export interface ProbeSamples {
  url: string;
  intervalMs: number;
  /** Per probe: send time (Unix ms), latency (ms), HTTP status (0 = no answer). */
  sentAt: number[];
  latencyMs: number[];
  status: number[];
}

const now = () => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: { url: { type: "string" }, out: { type: "string" }, "interval-ms": { type: "string" }, "max-seconds": { type: "string" } },
  });
  if (!values.url || !values.out) throw new Error("usage: bun bench/scale-prober.ts --url URL --out FILE [--interval-ms 20] [--max-seconds 1800]");
  const intervalMs = Number(values["interval-ms"] ?? 20);
  const maxMs = Number(values["max-seconds"] ?? 1800) * 1000;
  const samples: ProbeSamples = { url: values.url, intervalMs, sentAt: [], latencyMs: [], status: [] };
  let stopping = false;
  process.on("SIGTERM", () => (stopping = true));
  process.on("SIGINT", () => (stopping = true));
  const start = now();
  const maxProbes = Math.ceil(maxMs / intervalMs);
  for (let tick = 0; samples.sentAt.length < maxProbes && !stopping && now() - start < maxMs; tick++) {
    const due = start + tick * intervalMs;
    const wait = due - now();
    if (wait > 0) await Bun.sleep(wait);
    else tick = Math.floor((now() - start) / intervalMs); // late: probe now, skip the ticks missed
    if (stopping) break;
    const t0 = now();
    let status = 0;
    try {
      const res = await fetch(values.url, { signal: AbortSignal.timeout(60_000) });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = 0;
    }
    samples.sentAt.push(t0);
    samples.latencyMs.push(now() - t0);
    samples.status.push(status);
  }
  await Bun.write(values.out, JSON.stringify(samples));
  process.exit(0);
}

if (import.meta.main) await main();
