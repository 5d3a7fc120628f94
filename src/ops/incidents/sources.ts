import type { AppContext } from "../../context";
import { type ErrorRow, failedJobRuns, failedOfNewest, holdsMoreThan, type JobFailure, rowsUpTo } from "./store";

// What an incident draft makes of request_log and job_runs. request_log may hold millions of rows (~350,000 a day at
// 4 req/s), so its reads look at the newest `rowsLimit` rows of the window at most, `truncated` when it held more.

export type { ErrorRow, JobFailure };

export interface TimeRange {
  since: string;
  until: string;
}

export type TopErrors = Awaited<ReturnType<typeof topErrors>>;

/** Of the failed requests counted (0–1, 4 decimals). */
const share = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 10_000) / 10_000);

/** A failed request (status ≥ 400) names its code; one without a catalog code is named by its status. */
export const codeOf = (r: { error_code: string | null; status: number }) => r.error_code ?? `http_${r.status}`;

/** The failed requests (4xx and 5xx) of a range, by error code and by route, with the first and last one. */
export async function topErrors(ctx: AppContext, range: TimeRange, rowsLimit: number, topN: number) {
  const errors = await failedOfNewest(ctx.store, range.since, range.until, rowsLimit);
  // rowsLimit + 1 rows of the range would mean more than we read: ask for exactly one row past the bound.
  const beyond = await holdsMoreThan(ctx.store, range.since, range.until, rowsLimit);
  const read = Math.min(rowsLimit, await rowsUpTo(ctx.store, range.since, range.until, rowsLimit));
  const codes = new Map<string, { error_code: string; status: number; count: number }>();
  const routes = new Map<string, { method: string; route: string; count: number; server_errors: number }>();
  let serverErrors = 0;
  for (const r of errors) {
    const code = codeOf(r);
    const c = codes.get(`${code} ${r.status}`) ?? { error_code: code, status: r.status, count: 0 };
    c.count++;
    codes.set(`${code} ${r.status}`, c);
    const key = `${r.method} ${r.route}`;
    const rc = routes.get(key) ?? { method: r.method, route: r.route, count: 0, server_errors: 0 };
    rc.count++;
    if (r.status >= 500) {
      rc.server_errors++;
      serverErrors++;
    }
    routes.set(key, rc);
  }
  const rank = <T extends { count: number }>(m: Map<string, T>, tie: (x: T) => string) =>
    [...m.values()]
      .sort((a, b) => b.count - a.count || tie(a).localeCompare(tie(b)))
      .slice(0, topN)
      .map((x) => ({ ...x, share: share(x.count, errors.length) }));
  return {
    window: { ...range, hours: Math.round(((Date.parse(range.until) - Date.parse(range.since)) / 3_600_000) * 100) / 100 },
    rows_read: read,
    rows_limit: rowsLimit,
    truncated: beyond,
    error_requests: errors.length,
    server_errors: serverErrors,
    codes: rank(codes, (c) => `${c.error_code} ${c.status}`),
    routes: rank(routes, (r) => `${r.route} ${r.method}`),
    first_error: errors[0] ?? null,
    last_error: errors[errors.length - 1] ?? null,
  };
}

export const MAX_JOB_FAILURES = 50;

export function jobFailures(ctx: AppContext, range: TimeRange, limit = MAX_JOB_FAILURES): Promise<JobFailure[]> {
  return failedJobRuns(ctx.store, range.since, range.until, limit);
}
