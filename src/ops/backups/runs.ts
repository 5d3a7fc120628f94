import { type AppContext, slot, stateOf } from "../../context";
import { AppError } from "../../http/errors/errors";
import type { BackupPhase } from "./worker-protocol";
import type { FinishedBackup as FinishedSchema, RunningBackup as RunningSchema } from "./model";

// The backup running on this instance and the last one ended, in memory: a backup is a file on this instance's disk,
// so nobody else reads its progress. What outlives a restart is the files, their manifests and the audit rows.

/** Where a running backup's progress is read (GET /admin/backup/status); the 202 and the 409 point here. */
export const BACKUP_STATUS_PATH = "/admin/backup/status";

/** The running backup and the last one ended, as GET /admin/backup/status describes them. */
export type RunningBackup = typeof RunningSchema.static;
export type FinishedBackup = typeof FinishedSchema.static;

interface BackupRuns {
  running: RunningBackup | null;
  last: FinishedBackup | null;
}

const RUNS = slot("backup runs", (): BackupRuns => ({ running: null, last: null }));

/** What GET /admin/backup/status answers: copies, so a caller never holds the live record. */
export function backupStatus(ctx: AppContext): BackupRuns {
  const { running, last } = stateOf(ctx, RUNS);
  return { running: running && { ...running }, last: last && { ...last } };
}

/** A run's handle: it reports progress while it runs and records its outcome once. */
export interface BackupRun {
  id: string;
  startedAt: string;
  report(phase: BackupPhase, percent: number): void;
  finish(outcome: { name: string } | { error: string }): void;
}

/**
 * Claims the instance's one backup slot, or refuses with 409 backup_in_progress naming the running one. Synchronous
 * from the check to the claim, so two requests arriving together cannot both pass: one backup at a time keeps a
 * second full-size copy from doubling the disk's and the WAL's growth for nothing (the first is the backup asked for).
 */
export function claimBackupRun(ctx: AppContext, at: Date): BackupRun {
  const runs = stateOf(ctx, RUNS);
  if (runs.running) {
    const r = runs.running;
    throw new AppError("backup_in_progress", `Backup ${r.id} is running (${r.phase}, ${r.percent} %); follow it at ${BACKUP_STATUS_PATH}`, {
      details: { backup_id: r.id, phase: r.phase, percent: r.percent, started_at: r.started_at, status_url: BACKUP_STATUS_PATH },
    });
  }
  const id = `bkp_${Buffer.from(ctx.rng.bytes(8)).toString("hex")}`;
  const running: RunningBackup = { id, phase: "snapshot", percent: 0, started_at: at.toISOString() };
  runs.running = running;
  const began = performance.now();
  let logged = -1;
  return {
    id,
    startedAt: running.started_at,
    report(phase, percent) {
      const p = Math.max(0, Math.min(100, Math.floor(percent)));
      if (phase !== running.phase) logged = -1;
      running.phase = phase;
      running.percent = p;
      // One line per 10 % of each phase (and its start): enough to follow a long backup in the log, never a flood.
      const decile = Math.floor(p / 10) * 10;
      if (decile > logged) {
        logged = decile;
        ctx.log.info("backup progress", { id, phase, percent: decile });
      }
    },
    finish(outcome) {
      runs.last = {
        id,
        outcome: "name" in outcome ? "ok" : "failed",
        started_at: running.started_at,
        finished_at: ctx.clock.now().toISOString(),
        duration_ms: Math.round(performance.now() - began),
        name: "name" in outcome ? outcome.name : null,
        error: "error" in outcome ? outcome.error : null,
      };
      if (runs.running === running) runs.running = null;
    },
  };
}
