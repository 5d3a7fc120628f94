import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Actor } from "../../auth/actors";
import { auditOperator } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { refuseBackupsOnPostgres } from "./engine";
import { BackupDeadlineError, BackupWorkerError, copyInWorker, type CopyOutcome, sizeOrZero } from "./in-worker";
import { backupNameAt, backupsDir, listBackupFiles, manifestPathOf, writeManifest, type BackupFile } from "./list";
import { type BackupRun, claimBackupRun } from "./runs";
import type { BackupFault } from "./worker-protocol";
import type { BackupRun as BackupMadeSchema } from "./model";

export type PrunedBackup = Pick<BackupFile, "name" | "size_bytes" | "created_at">;

export interface BackupRunInput {
  actor: Actor;
  requestId?: string | null;
  /**
   * Tests only (test/ops/backups/off-loop.test.ts): a fault the worker injects, to prove that a failed backup leaves
   * no file under a backup name. No route, page or CLI command sets it.
   */
  testFault?: BackupFault;
  /** Tests only: the deadline instead of the one the database's size gives (backupDeadlineMs). */
  testDeadlineMs?: number;
}

export type BackupMade = typeof BackupMadeSchema.static;

export interface BackupResult {
  backup: BackupMade;
  /** Older backups deleted because more than BACKUP_KEEP existed after this one. */
  pruned: PrunedBackup[];
}

/** A backup begun: its id (GET /admin/backup/status reports it) and its outcome. */
export interface StartedBackup {
  id: string;
  done: Promise<BackupResult>;
}

/** The temp name the copy is written and checked under: a dot file, which no listing, download or prune takes for a backup. */
export const partialNameOf = (name: string) => `.${name}.partial`;

/**
 * SQLite only (409 backup_not_on_postgres). A `VACUUM INTO` snapshot, integrity-checked and hashed in a worker (the
 * service keeps answering), named `<db dir>/backups/herald-<time>.db` with a `<name>.json` manifest; then backups
 * beyond BACKUP_KEEP are deleted, each audited. One at a time per instance (409 backup_in_progress). The checks and
 * the claim are synchronous, so they are answered before this returns; the work is `done`.
 */
export function startBackup(ctx: AppContext, input: BackupRunInput): StartedBackup {
  refuseBackupsOnPostgres(ctx.store.dialect);
  if (ctx.config.dbPath === ":memory:") throw new AppError("conflict", "An in-memory database cannot be backed up");
  const at = ctx.clock.now();
  const dir = backupsDir(ctx);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new AppError("service_unavailable", "The backup could not be written; see the server log", { internal: (err as Error).message });
  }
  const name = backupNameAt(at);
  const file = join(dir, name);
  if (existsSync(file)) throw new AppError("conflict", `A backup named ${name} already exists (two runs in the same millisecond); run it again`);
  const run = claimBackupRun(ctx, at);
  return { id: run.id, done: makeBackup(ctx, input, run, file, name) };
}

/** startBackup, waited for: the answer of POST /admin/backup/run, the console's form and `herald backup`. */
export async function runBackup(ctx: AppContext, input: BackupRunInput): Promise<BackupResult> {
  return startBackup(ctx, input).done;
}

/**
 * How long a backup may run: 60 s plus BACKUP_DEADLINE_MINUTES_PER_GB (2) per GB of the file and its WAL. Measured:
 * ~18 s a GB in its worker (112 s for 2.1 GB on the service's thread), so 2 minutes a GB leaves a slow disk room. A
 * worker stuck for good would otherwise hold the one backup slot for good.
 */
export function backupDeadlineMs(databaseBytes: number, minutesPerGb: number): number {
  return 60_000 + Math.ceil((databaseBytes / 2 ** 30) * minutesPerGb * 60_000);
}

async function makeBackup(ctx: AppContext, input: BackupRunInput, run: BackupRun, file: string, name: string): Promise<BackupResult> {
  const partial = join(backupsDir(ctx), partialNameOf(name));
  // A stop mid-backup (SIGTERM) would leave a copy as large as the database: the temps are removed on exit too.
  const removeTemps = () => {
    for (const temp of [partial, `${partial}-journal`, `${partial}-wal`, `${partial}-shm`]) rmSync(temp, { force: true });
  };
  process.once("exit", removeTemps);
  // Its job_runs row ("backup"), beside the jobs' runs; one that cannot be written costs the backup nothing.
  const row = await ctx.jobs.beginRun("backup").catch((err) => {
    ctx.log.warn("backup: its job_runs row could not be written", { id: run.id, error: (err as Error).message });
    return null;
  });
  const finishRow = (error: string | null) => row?.finish(error).catch(() => {});
  const dbPath = ctx.config.dbPath;
  const deadlineMs = input.testDeadlineMs ?? backupDeadlineMs(sizeOrZero(dbPath) + sizeOrZero(`${dbPath}-wal`), ctx.config.backupDeadlineMinutesPerGb);
  let stopped: BackupDeadlineError | null = null;
  try {
    const copy = await copyInWorker({ dbPath, partialPath: partial, fault: input.testFault }, run.report, deadlineMs);
    ctx.log.info("backup copied", { id: run.id, size_bytes: copy.sizeBytes, wal_checkpoint: copy.checkpoint });
    const backup = await publish(ctx, input, run, copy, partial, file, name);
    const pruned = await pruneBackups(ctx, input, name);
    ctx.log.info("backup made", { id: run.id, name, size_bytes: backup.size_bytes, pruned: pruned.length });
    await finishRow(null);
    run.finish({ name });
    return { backup, pruned };
  } catch (err) {
    // Whatever failed, nothing is left under the temp name, and nothing was ever under the backup's own.
    removeTemps();
    if (err instanceof BackupDeadlineError) stopped = err;
    const refusal = asRefusal(err);
    const deadline = stopped && { deadline_ms: stopped.deadlineMs, phase: stopped.phase };
    ctx.log.error("backup failed", { id: run.id, error: refusal.message, internal: refusal.internal ?? null, ...deadline });
    await finishRow(refusal.message);
    run.finish({ error: refusal.message });
    throw refusal;
  } finally {
    // A worker stopped at its deadline inside a long SQLite statement goes on until that statement returns, and may
    // write its copy meanwhile: removed again once it has ended (and on exit until then).
    if (stopped) {
      void stopped.ended.then(() => {
        removeTemps();
        process.off("exit", removeTemps);
      });
    } else {
      process.off("exit", removeTemps);
    }
  }
}

/** What a failure answers: the worker's as a 503 (a disk full or read-only, a dead worker), never a bare 500. */
function asRefusal(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const message =
    err instanceof BackupDeadlineError
      ? `The backup took longer than its deadline (${Number((err.deadlineMs / 1000).toFixed(1))} s for this database${err.phase ? `, stopped in ${err.phase}` : ""}) and was stopped; no backup was made; see the server log`
      : err instanceof BackupWorkerError && err.crashed
        ? "The backup's worker stopped before it finished; no backup was made; see the server log"
        : err instanceof BackupWorkerError && err.phase !== "snapshot"
          ? "The backup could not be checked; no backup was made; see the server log"
          : "The backup could not be written; see the server log";
  return new AppError("service_unavailable", message, { internal: (err as Error).message });
}

/**
 * Names the checked copy as the backup (a rename, atomic in one folder), writes its manifest and audits it; if either
 * fails the file is removed again: a backup name always means a checked copy with its manifest and audit row.
 */
async function publish(ctx: AppContext, input: BackupRunInput, run: BackupRun, copy: CopyOutcome, partial: string, file: string, name: string) {
  if (copy.integrity !== "ok") {
    throw new AppError("server_error", "The backup failed its integrity check and was removed; see the server log", { internal: copy.integrity });
  }
  const backup: BackupMade = { name, path: file, size_bytes: copy.sizeBytes, sha256: copy.sha256, created_at: run.startedAt, integrity: "ok" };
  try {
    renameSync(partial, file);
    writeManifest(file, { sha256: backup.sha256, size_bytes: backup.size_bytes, created_at: backup.created_at, integrity: "ok" });
    await auditOperator(ctx.store, input, backup.created_at, "backup.run", file, { sha256: backup.sha256, size_bytes: backup.size_bytes, backup_id: run.id });
  } catch (err) {
    rmSync(file, { force: true });
    rmSync(manifestPathOf(file), { force: true });
    throw err;
  }
  return backup;
}

/**
 * Keeps the newest BACKUP_KEEP backups (the one just made always among them) and deletes the rest with their
 * manifests. Each deletion and its audit row share a transaction: the audit row is written first and the file
 * removed inside the same transaction body (rmSync is synchronous: the body awaits nothing but the store), so a
 * file that cannot be removed rolls its audit row back (and is tried again after the next run), and no file
 * disappears without its row.
 */
async function pruneBackups(ctx: AppContext, input: BackupRunInput, keepName: string): Promise<PrunedBackup[]> {
  let others: BackupFile[];
  try {
    others = listBackupFiles(backupsDir(ctx)).filter((f) => f.name !== keepName);
  } catch (err) {
    // The backup is made; a folder that cannot be listed now only postpones pruning to the next run.
    ctx.log.warn("could not list the backups to prune", { error: (err as Error).message });
    return [];
  }
  const doomed = others.slice(Math.max(0, ctx.config.backupKeep - 1));
  const pruned: PrunedBackup[] = [];
  const at = ctx.clock.now().toISOString();
  for (const f of doomed) {
    const gone = { name: f.name, size_bytes: f.size_bytes, created_at: f.created_at };
    try {
      await ctx.store.tx(async (t) => {
        await auditOperator(t, input, at, "backup.pruned", f.path, { ...gone, keep: ctx.config.backupKeep });
        rmSync(f.path);
        rmSync(manifestPathOf(f.path), { force: true });
      });
      pruned.push(gone);
    } catch (err) {
      ctx.log.warn("could not prune an old backup", { name: f.name, error: (err as Error).message });
    }
  }
  return pruned;
}
