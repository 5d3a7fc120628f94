import type { AppContext } from "../../context";

// What an incident draft reads besides the status incidents: request_log (the errors) and job_runs (the
// failed runs). Every read is bounded twice: by time (the `at` / `started_at` indexes) and by a row count.
// request_log may hold millions of rows (about 350,000 a day at 4 req/s), so its reads look at no more than
// `rowsLimit` rows of the window — the newest ones — and say so with `truncated` when the window held more.

export interface TimeRange {
  since: string;
  until: string;
}

export interface ErrorRow {
  at: string;
  method: string;
  route: string;
  status: number;
  error_code: string | null;
  request_id: string;
}

export interface ErrorCodeCount {
  error_code: string;
  status: number;
  count: number;
  /** Of the failed requests counted (0–1, 4 decimals). */
  share: number;
}

export interface RouteCount {
  method: string;
  route: string;
  count: number;
  server_errors: number;
  share: number;
}

export interface TopErrors {
  window: TimeRange & { hours: number };
  rows_read: number;
  rows_limit: number;
  /** The window held more rows than rows_limit: only the newest rows_limit were read. */
  truncated: boolean;
  error_requests: number;
  server_errors: number;
  codes: ErrorCodeCount[];
  routes: RouteCount[];
  first_error: ErrorRow | null;
  last_error: ErrorRow | null;
}

/** The newest `rowsLimit` rows of the range (the inner LIMIT bounds what SQLite reads), keeping the failed ones. */
const ERRORS_OF_NEWEST = `SELECT at, method, route, status, error_code, request_id FROM (
    SELECT at, method, route, status, error_code, request_id FROM request_log WHERE at >= ? AND at < ? ORDER BY at DESC LIMIT ?
  ) WHERE status >= 400 ORDER BY at`;

const share = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 10_000) / 10_000);

/** A failed request (status ≥ 400) names its code; one without a catalog code is named by its status. */
export const codeOf = (r: { error_code: string | null; status: number }) => r.error_code ?? `http_${r.status}`;

/** The failed requests (4xx and 5xx) of a range, by error code and by route, with the first and last one. */
export function topErrors(ctx: AppContext, range: TimeRange, rowsLimit: number, topN: number): TopErrors {
  const sqlite = ctx.db.sqlite;
  const errors = sqlite.query(ERRORS_OF_NEWEST).all(range.since, range.until, rowsLimit) as ErrorRow[];
  // rowsLimit + 1 rows of the range would mean more than we read: ask for exactly one row past the bound.
  const beyond = sqlite
    .query("SELECT 1 AS x FROM request_log WHERE at >= ? AND at < ? ORDER BY at DESC LIMIT 1 OFFSET ?")
    .get(range.since, range.until, rowsLimit);
  const read = Math.min(
    rowsLimit,
    (
      sqlite.query("SELECT COUNT(*) AS n FROM (SELECT 1 FROM request_log WHERE at >= ? AND at < ? LIMIT ?)").get(range.since, range.until, rowsLimit) as {
        n: number;
      }
    ).n,
  );
  const codes = new Map<string, ErrorCodeCount>();
  const routes = new Map<string, RouteCount>();
  let serverErrors = 0;
  for (const r of errors) {
    const code = codeOf(r);
    const c = codes.get(`${code} ${r.status}`) ?? { error_code: code, status: r.status, count: 0, share: 0 };
    c.count++;
    codes.set(`${code} ${r.status}`, c);
    const key = `${r.method} ${r.route}`;
    const rc = routes.get(key) ?? { method: r.method, route: r.route, count: 0, server_errors: 0, share: 0 };
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
    truncated: beyond !== null,
    error_requests: errors.length,
    server_errors: serverErrors,
    codes: rank(codes, (c) => `${c.error_code} ${c.status}`),
    routes: rank(routes, (r) => `${r.route} ${r.method}`),
    first_error: errors[0] ?? null,
    last_error: errors[errors.length - 1] ?? null,
  };
}

/** The first and last failed request of a range, from at most `rowsLimit` of its newest rows. */
export function firstLastError(ctx: AppContext, range: TimeRange, rowsLimit: number): { first: ErrorRow | null; last: ErrorRow | null } {
  const errors = ctx.db.sqlite.query(ERRORS_OF_NEWEST).all(range.since, range.until, rowsLimit) as ErrorRow[];
  return { first: errors[0] ?? null, last: errors[errors.length - 1] ?? null };
}

export interface JobFailure {
  job: string;
  run_id: number;
  started_at: string;
  finished_at: string | null;
  error: string | null;
  trigger: string;
}

export const MAX_JOB_FAILURES = 50;

/** Failed job runs that started in the range, newest first (job_runs_started_idx). */
export function jobFailures(ctx: AppContext, range: TimeRange, limit = MAX_JOB_FAILURES): JobFailure[] {
  return ctx.db.sqlite
    .query(
      `SELECT name AS job, id AS run_id, started_at, finished_at, error, trigger FROM job_runs
       WHERE started_at >= ? AND started_at < ? AND ok = 0 ORDER BY started_at DESC, id DESC LIMIT ?`,
    )
    .all(range.since, range.until, limit) as JobFailure[];
}
