import { statSync } from "node:fs";
import type { AppContext } from "../context";
import { migrationStatus } from "../db/migrate";
import { ERROR_CATALOG, type CatalogEntry } from "../http/errors";

export interface ReadinessCheck {
  ok: boolean;
  detail: string;
}

/**
 * Readiness: the database takes a write lock, migrations are current, the master key opens the stored secrets,
 * and jobs run when they should.
 */
export function readiness(ctx: AppContext): { ready: boolean; checks: Record<string, ReadinessCheck> } {
  const checks: Record<string, ReadinessCheck> = {};
  try {
    // BEGIN IMMEDIATE takes the write lock without writing: proves the file is writable and not wedged.
    ctx.db.sqlite.exec("BEGIN IMMEDIATE");
    ctx.db.sqlite.exec("ROLLBACK");
    checks.database = { ok: true, detail: "writable" };
  } catch (err) {
    checks.database = { ok: false, detail: `not writable: ${(err as Error).message}` };
  }
  const m = migrationStatus(ctx.db);
  checks.migrations = { ok: m.current, detail: `${m.applied}/${m.total} applied` };
  // A key that cannot open the stored secrets fails every signed partner call (503 master_key_mismatch).
  const mismatch = ctx.secrets.mismatch;
  checks.master_key = mismatch
    ? { ok: false, detail: `master_key_mismatch: ${mismatch.detail}` }
    : { ok: true, detail: `fingerprint ${ctx.secrets.fingerprint} opens the stored secrets` };
  if (!ctx.config.jobsEnabled) checks.jobs = { ok: true, detail: "disabled by JOBS_ENABLED=0" };
  else checks.jobs = ctx.jobs.started ? { ok: true, detail: "scheduled" } : { ok: false, detail: "not started" };
  return { ready: Object.values(checks).every((c) => c.ok), checks };
}

export function databaseSizeBytes(ctx: AppContext): number {
  if (ctx.db.path === ":memory:") return 0;
  let total = 0;
  for (const suffix of ["", "-wal"]) {
    try {
      total += statSync(ctx.db.path + suffix).size;
    } catch {
      // the WAL may not exist between checkpoints
    }
  }
  return total;
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
