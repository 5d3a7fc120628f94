import type { TestApp } from "../support/app";
import type { TestKey } from "../support/partner";

export interface LogRow {
  route: string;
  status: number;
  latencyUs: number;
  at?: string;
  method?: string;
}

/** Known request_log rows for a key, written through the request log itself (flushed in batches under its buffer cap). */
export async function insertLog(t: TestApp, keyId: string | null, rows: LogRow[], defaultAt: string): Promise<void> {
  for (const [i, r] of rows.entries()) {
    if (i % 10_000 === 0) await t.ctx.requestLog.flush();
    t.ctx.requestLog.record({
      at: r.at ?? defaultAt,
      method: r.method ?? "GET",
      route: r.route,
      status: r.status,
      latencyUs: r.latencyUs,
      partnerKeyId: keyId,
      clientIp: "127.0.0.1",
      requestId: `req_test_${i}`,
      errorCode: null,
    });
  }
  await t.ctx.requestLog.flush();
}

export const minutesAgo = (t: TestApp, m: number) => new Date(t.clock.now().getTime() - m * 60_000).toISOString();

// Route A: 20 samples; route B: 7. Sorted by hand in the comments below.
export const A_US = [1234, 5678, 910, 11121, 3141, 5926, 5358, 9793, 2384, 6264, 3383, 2795, 288, 4197, 1693, 9937, 5105, 8209, 7494, 4592];
export const B_US = [100, 700, 300, 500, 200, 600, 400];
const A_STATUS = [...Array(16).fill(200), 400, 400, 429, 500];
const B_STATUS = [...Array(6).fill(200), 404];

/** The hand-built sample for `key` (10 minutes ago), plus noise that must never be counted for it. */
export async function seedSample(t: TestApp, key: TestKey, other: TestKey) {
  const at = minutesAgo(t, 10);
  await insertLog(
    t,
    key.keyId,
    A_US.map((us, i) => ({ route: "/api/partner/users/:user_id", status: A_STATUS[i]!, latencyUs: us })),
    at,
  );
  await insertLog(
    t,
    key.keyId,
    B_US.map((us, i) => ({ route: "/api/salutes/credit", method: "POST", status: B_STATUS[i]!, latencyUs: us })),
    at,
  );
  await insertLog(t, other.keyId, [{ route: "/api/salutes/credit", status: 500, latencyUs: 9_999_999 }], at);
  await insertLog(t, null, [{ route: "(unmatched)", status: 404, latencyUs: 9_999_999 }], at);
}

/**
 * Nearest-rank percentile of ascending values: the value at rank ceil(p/100 × n), 1-based — what the histograms'
 * percentiles are checked against.
 */
export function nearestRank(sortedAsc: readonly number[], p: number): number {
  return sortedAsc[Math.max(1, Math.ceil((p * sortedAsc.length) / 100)) - 1]!;
}
