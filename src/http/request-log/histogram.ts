// Latency histograms with fixed, log-spaced buckets, as Prometheus histograms keep them: the request log's hourly
// summaries (summary.ts) count each request in one bucket, and percentiles are read from the buckets' sums over a
// window — a read of a few summary rows, the same at 10M requests as at 10k, where sorting the window's
// raw latencies cost seconds.
//
// Four buckets per doubling, from 16 µs to 2^22 × 16 µs ≈ 67 s: bucket 0 holds [0, 16 µs], bucket i (1…88) holds
// (16 × 2^((i−1)/4), 16 × 2^(i/4)] µs, bucket 89 everything slower. A percentile is the bucket that holds the
// nearest-rank sample, reported as the geometric middle of its bounds: within 2^(1/8) − 1 ≈ 9.05 % of the
// nearest-rank value the raw samples would give (docs/partner-usage.md "How percentiles are estimated").

/** The lower bound of bucket 1, in µs; bucket 0 holds every latency at or below it. */
export const FIRST_BOUND_US = 16;
export const BUCKETS_PER_DOUBLING = 4;
/** Buckets with an upper bound (0…88), then one for everything slower (89). */
export const BOUNDED_BUCKETS = 89;
export const BUCKET_COUNT = BOUNDED_BUCKETS + 1;
/** The largest relative error of a percentile read from the buckets (outside bucket 0 and the last). */
export const MAX_RELATIVE_ERROR = 2 ** (1 / (2 * BUCKETS_PER_DOUBLING)) - 1;

/** Upper bound of each bounded bucket, in µs (bucket i: 16 × 2^(i/4)). */
export const UPPER_BOUNDS_US: readonly number[] = Array.from({ length: BOUNDED_BUCKETS }, (_, i) => FIRST_BOUND_US * 2 ** (i / BUCKETS_PER_DOUBLING));

/** The summary table's column of each bucket: h0 … h89. */
export const BUCKET_COLUMNS: readonly string[] = Array.from({ length: BUCKET_COUNT }, (_, i) => `h${i}`);

/** The bucket of a latency in µs. */
export function bucketOf(us: number): number {
  if (!(us > FIRST_BOUND_US)) return 0;
  let i = Math.ceil(Math.log2(us / FIRST_BOUND_US) * BUCKETS_PER_DOUBLING);
  // log2's rounding at a bound: settle on the bucket whose (lower, upper] holds the value.
  while (i > 0 && i <= BOUNDED_BUCKETS && us <= UPPER_BOUNDS_US[i - 1]!) i--;
  while (i < BOUNDED_BUCKETS && us > UPPER_BOUNDS_US[i]!) i++;
  return Math.min(i, BOUNDED_BUCKETS);
}

/**
 * The value a bucket stands for: the geometric middle of its bounds; bucket 0 its upper bound (16 µs), the last
 * bucket its lower bound (≈ 67 s, "at least").
 */
export function bucketValueUs(i: number): number {
  if (i <= 0) return FIRST_BOUND_US;
  if (i >= BOUNDED_BUCKETS) return UPPER_BOUNDS_US[BOUNDED_BUCKETS - 1]!;
  return Math.sqrt(UPPER_BOUNDS_US[i - 1]! * UPPER_BOUNDS_US[i]!);
}

/**
 * samples, p50, p95 and p99 in ms (3 decimals) of one histogram, as latency answers carry them. A percentile is the
 * nearest rank (the sample at rank ceil(p/100 × n)), as the value of the bucket that holds that sample; null when
 * nothing was counted.
 */
export function histogramPercentilesMs(counts: ArrayLike<number>) {
  let samples = 0;
  for (let i = 0; i < counts.length; i++) samples += counts[i]!;
  const at = (p: number) => {
    if (samples === 0) return null;
    const rank = Math.max(1, Math.ceil((p * samples) / 100));
    let seen = 0;
    let i = 0;
    while ((seen += counts[i]!) < rank && i < counts.length - 1) i++;
    return Math.round(bucketValueUs(i)) / 1000;
  };
  return { samples, p50_ms: at(50), p95_ms: at(95), p99_ms: at(99) };
}
