// Latency percentiles for the benchmarks that time each operation themselves (the credit floors and load
// generator, the webhook receiver), and the one-line JSON a credit floor prints for bench/credit.ts.

/** The nearest-rank percentile `p` (0–1) of ascending `sorted`; NaN when it is empty. */
export const percentile = (sorted: ArrayLike<number>, p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;

/** What a credit floor (bench/credit-sqlite.ts, bench/credit-postgres.ts) prints: throughput and p50/p99 in ms. */
export function floorResultLine(credits: number, seconds: number, latenciesMs: Float64Array): string {
  const sorted = latenciesMs.slice().sort();
  return `${JSON.stringify({
    credits,
    seconds: Number(seconds.toFixed(3)),
    credits_per_sec: Number((credits / seconds).toFixed(1)),
    p50_ms: Number(percentile(sorted, 0.5).toFixed(4)),
    p99_ms: Number(percentile(sorted, 0.99).toFixed(4)),
  })}\n`;
}
