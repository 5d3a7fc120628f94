// The `credit` benchmark's load generator, run as its own process by bench/credit.ts (wrk cannot sign: every
// credit needs a fresh nonce, a fresh Idempotency-Key and a signature over its own body).
//
//   BENCH_KEY_ID=… BENCH_SECRET=… bun bench/credit-load.ts --url http://127.0.0.1:PORT[,http://…] --users 1,2,3 \
//     --credits 20000 --warmup 1000 --connections 50
//
// Every request is signed BEFORE the clock starts, so signing costs nothing in the measurement; a signature
// stays valid for ±300 s (SIGNATURE_SKEW_SECONDS), far longer than a run. `--connections` workers each send one
// request at a time over fetch's keep-alive pool. Prints one JSON object on stdout.
import { parseArgs } from "node:util";
import { newNonce, signRequest } from "../src/client/sign";
import { percentile } from "./percentiles";

const PATH = "/api/salutes/credit";

interface Signed {
  headers: Record<string, string>;
  body: string;
}

export interface LoadResult {
  credits: number;
  seconds: number;
  credits_per_sec: number;
  p50_ms: number;
  p99_ms: number;
  /** status → count, over the measured credits only. */
  statuses: Record<string, number>;
  socket_errors: number;
  first_failure: string | null;
  warmup: number;
}

function sign(keyId: string, secret: string, users: string[], count: number, runId: string): Signed[] {
  const out: Signed[] = [];
  for (let i = 0; i < count; i++) {
    const body = JSON.stringify({ user_id: users[i % users.length], amount: 1.25, reason: "bench_credit", source: "bench.credit" });
    const { headers } = signRequest({ keyId, secret, method: "POST", target: PATH, body, nonce: newNonce() });
    out.push({ body, headers: { ...(headers as unknown as Record<string, string>), "Idempotency-Key": `${runId}-${i}`, "Content-Type": "application/json" } });
  }
  return out;
}

/** `urls`: the instances to spread the load over (worker i sends to urls[i % n]). */
async function fire(urls: string[], requests: Signed[], connections: number) {
  const latencies = new Float64Array(requests.length);
  const statuses: Record<string, number> = {};
  let socketErrors = 0;
  let firstFailure: string | null = null;
  let next = 0;
  const worker = async (w: number) => {
    const url = urls[w % urls.length]!;
    while (next < requests.length) {
      const i = next++;
      const r = requests[i]!;
      const t0 = performance.now();
      try {
        const res = await fetch(url + PATH, { method: "POST", headers: r.headers, body: r.body });
        const text = await res.text();
        latencies[i] = performance.now() - t0;
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status !== 200 && firstFailure === null) firstFailure = `HTTP ${res.status}: ${text.slice(0, 300)}`;
      } catch (err) {
        latencies[i] = performance.now() - t0;
        socketErrors++;
        if (firstFailure === null) firstFailure = (err as Error).message;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(connections, requests.length) }, (_, w) => worker(w)));
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.slice().sort();
  return { seconds, statuses, socketErrors, firstFailure, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: { url: { type: "string" }, users: { type: "string" }, credits: { type: "string" }, warmup: { type: "string" }, connections: { type: "string" } },
  });
  const keyId = process.env.BENCH_KEY_ID;
  const secret = process.env.BENCH_SECRET;
  if (!values.url || !values.users || !keyId || !secret)
    throw new Error("usage: BENCH_KEY_ID=… BENCH_SECRET=… bun bench/credit-load.ts --url URL --users 1,2 [--credits N] [--warmup N] [--connections N]");
  const users = values.users.split(",");
  const credits = Number(values.credits ?? 20_000);
  const warmup = Number(values.warmup ?? 1_000);
  const connections = Number(values.connections ?? 50);
  const runId = `bench-${Date.now().toString(36)}`;

  const warm = sign(keyId, secret, users, warmup, `${runId}-w`);
  const measured = sign(keyId, secret, users, credits, `${runId}-m`);
  const urls = values.url.split(",");
  if (warm.length) await fire(urls, warm, connections);
  const r = await fire(urls, measured, connections);
  const result: LoadResult = {
    credits,
    seconds: Number(r.seconds.toFixed(3)),
    credits_per_sec: Number((credits / r.seconds).toFixed(1)),
    p50_ms: Number(r.p50.toFixed(3)),
    p99_ms: Number(r.p99.toFixed(3)),
    statuses: r.statuses,
    socket_errors: r.socketErrors,
    first_failure: r.firstFailure,
    warmup,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

if (import.meta.main) await main();
