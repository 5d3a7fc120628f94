import { within } from "../clock";
import type { AppContext } from "../context";
import { migrationStatusOn } from "../db/migrate";
import type { Dialect } from "../db/port";
import { sqliteTakesWriteLock } from "../db/sqlite-file";
import { ERROR_CATALOG, type CatalogEntry } from "../http/errors/errors";

export interface ReadinessCheck {
  ok: boolean;
  detail: string;
}

export interface Readiness {
  ready: boolean;
  database: { engine: Dialect };
  checks: Record<string, ReadinessCheck>;
}

/**
 * "Takes writes": an empty transaction. On SQLite it is BEGIN IMMEDIATE, which takes the write lock without writing
 * and so proves the file is writable and not wedged behind another writer (sqliteWriteCheck below); on PostgreSQL the
 * ping already says the server answers and is not a standby in recovery.
 */
const takesWrites = (ctx: AppContext) => ctx.store.tx(async () => {});

/**
 * SQLite's "takes writes" within `ms`, on a connection of its own (sqliteTakesWriteLock says why: a /readyz of 5 s behind
 * a CLI command's lock). A database in memory has no other connection: its empty transaction, same deadline.
 */
async function sqliteWriteCheck(ctx: AppContext, ms: number): Promise<void> {
  if (ctx.config.dbPath === ":memory:") await answered(takesWrites(ctx), ms, "write check");
  else sqliteTakesWriteLock(ctx.config.dbPath, ms);
}

/** How long /readyz waits for the database's checks in all, so that the probe answers within a second. */
const READINESS_DATABASE_MS = 700;

/** `work`, or an error naming what did not answer within `ms` (the work itself is bounded by the store's deadlines). */
const answered = <T>(work: Promise<T>, ms: number, what: string): Promise<T> =>
  within(work, ms, () => new Error(`the database did not answer the ${what} within ${Math.round(ms)} ms`));

/** What is left of a deadline (`performance.now()` based), at least 1 ms: a check that starts late fails at once. */
const left = (deadline: number) => Math.max(1, deadline - performance.now());

/** The database checks in progress, by context: every /readyz that arrives meanwhile waits for the same answer. */
const databaseChecksRunning = new WeakMap<AppContext, Promise<Record<"database" | "migrations", ReadinessCheck>>>();

/**
 * The database's part of readiness — it answers, takes writes, and its migrations are current — run once for every
 * probe that arrives while it runs (single flight). A burst of probes (several balancers, a probe storm) then costs
 * one ping and one read, not one each competing for the pool's connections with the requests they guard: under
 * such a burst each probe's own ping queued behind the others past its deadline and answered 503 on a healthy
 * database. A probe that joins gets an answer begun at most READINESS_DATABASE_MS before it arrived.
 */
function databaseChecks(ctx: AppContext): Promise<Record<"database" | "migrations", ReadinessCheck>> {
  const running = databaseChecksRunning.get(ctx);
  if (running) return running;
  const run = checkDatabase(ctx).finally(() => databaseChecksRunning.delete(ctx));
  databaseChecksRunning.set(ctx, run);
  return run;
}

async function checkDatabase(ctx: AppContext): Promise<Record<"database" | "migrations", ReadinessCheck>> {
  const engine = ctx.store.dialect;
  // The probe answers within a second whatever the database does: a balancer's check must not time out on an
  // instance whose database froze, it must see the 503 and the reason.
  const deadline = performance.now() + READINESS_DATABASE_MS;
  let database: ReadinessCheck;
  try {
    await answered(ctx.store.ping({ timeoutMs: READINESS_DATABASE_MS }), READINESS_DATABASE_MS, "ping");
    if (engine === "sqlite") await sqliteWriteCheck(ctx, left(deadline));
    database = { ok: true, detail: engine === "sqlite" ? "writable" : "answers; a primary, not in recovery" };
  } catch (err) {
    database = { ok: false, detail: `${engine === "sqlite" ? "not writable" : "not available"}: ${(err as Error).message}` };
  }
  // Asking a database that did not answer again would only wait out a second timeout.
  if (!database.ok) return { database, migrations: { ok: false, detail: "not read: the database is not available" } };
  try {
    const m = await answered(migrationStatusOn(ctx.store), left(deadline), "migrations read");
    return { database, migrations: { ok: m.current, detail: `${m.applied}/${m.total} applied` } };
  } catch (err) {
    return { database, migrations: { ok: false, detail: `not read: ${(err as Error).message}` } };
  }
}

/**
 * Readiness: the database answers and takes writes (ctx.store.ping, and SQLite's write lock), its migrations are
 * current, the master key opens the stored secrets, and jobs run when they should. Never throws: a database that
 * is gone is a failed check (503 with the body), not an error.
 */
export async function readiness(ctx: AppContext): Promise<Readiness> {
  const engine = ctx.store.dialect;
  const checks: Record<string, ReadinessCheck> = { ...(await databaseChecks(ctx)) };
  // A key that cannot open the stored secrets fails every signed partner call (503 master_key_mismatch).
  const mismatch = ctx.secrets.mismatch;
  checks.master_key = mismatch
    ? { ok: false, detail: `master_key_mismatch: ${mismatch.detail}` }
    : { ok: true, detail: `fingerprint ${ctx.secrets.fingerprint} opens the stored secrets` };
  if (!ctx.config.jobsEnabled) checks.jobs = { ok: true, detail: "disabled by JOBS_ENABLED=0" };
  else checks.jobs = ctx.jobs.started ? { ok: true, detail: "scheduled" } : { ok: false, detail: "not started" };
  // A stop in progress (SIGTERM): not ready, while requests are still served, so a load balancer moves traffic away
  // before the listening socket closes (SHUTDOWN_DRAIN_DELAY_MS, src/cli/serve.ts).
  const draining = ctx.draining;
  const drainingDetail =
    draining && `draining: ${draining.signal} at ${draining.since.toISOString()}, stops listening at ${draining.stopsListeningAt.toISOString()}`;
  checks.shutdown = drainingDetail ? { ok: false, detail: drainingDetail } : { ok: true, detail: "not requested" };
  return { ready: Object.values(checks).every((c) => c.ok), database: { engine }, checks };
}

/** The error catalog as partners read it (errors.json): entries in code order, each with recovery links. */
export function errorCatalog() {
  const entries = Object.entries(ERROR_CATALOG as Record<string, CatalogEntry>)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, e]) => ({
      error_code: code,
      ...e,
      available_in_modes: [...e.available_in_modes],
      endpoint_groups: [...e.endpoint_groups],
      recovery_links: { docs: `/api/docs`, catalog: `/developers/api-errors.json#${code}` },
    }));
  return { count: entries.length, entries, by_code: Object.fromEntries(entries.map((e) => [e.error_code, e])) };
}
