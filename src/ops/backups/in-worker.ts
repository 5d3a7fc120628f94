import { statSync } from "node:fs";
import { startWorker } from "../../worker-entry";
import type { BackupJob, BackupPhase, WorkerMessage } from "./worker-protocol";

// The main thread's side of the backup's worker (backup-worker.ts): its messages and the growing copy's size become
// progress, and it settles once — answer, failure or death — terminating the worker, so none outlives its backup.

/** How often the snapshot's progress is read from the copy's size: stat is cheap, and 4 Hz is plenty for a person. */
const POLL_MS = 250;

/** The worker's answer: the copy is at job.partialPath; `integrity` "ok" or what SQLite reported. */
export type CopyOutcome = Omit<Extract<WorkerMessage, { type: "done" }>, "type">;

/** A phase failed in the worker (an SQLite or file error), or the worker died before it answered. */
export class BackupWorkerError extends Error {
  constructor(
    readonly phase: BackupPhase | null,
    message: string,
    readonly crashed: boolean,
  ) {
    super(message);
  }
}

/**
 * The backup ran past its deadline and was stopped: its worker was told to end, and `ended` resolves once it has. A
 * worker blocked in JavaScript ends at once; one inside a long SQLite statement only when that statement returns
 * (Bun ends a worker between JavaScript steps: one in a 28 s query ended 28 s after it was told to).
 */
export class BackupDeadlineError extends BackupWorkerError {
  constructor(
    phase: BackupPhase | null,
    readonly deadlineMs: number,
    readonly ended: Promise<void>,
  ) {
    super(phase, `the backup ran past its deadline of ${(deadlineMs / 1000).toFixed(1)} s${phase ? ` (in ${phase})` : ""} and its worker was stopped`, false);
  }
}

/** A file's size, 0 when it is not there (yet). */
export const sizeOrZero = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** `done` of `total` as a percent; an estimate never shows 100 before its phase has ended. */
const percentOf = (done: number, total: number | null, cap: number) => (total && total > 0 ? Math.min(cap, (done / total) * 100) : 0);

/**
 * Runs `job` in a new worker; `report` hears each phase's progress (0 at its start, 100 at its end). After
 * `deadlineMs` without an answer the worker is told to end and the copy fails with a BackupDeadlineError: a worker
 * stuck for good would otherwise hold the instance's one backup slot for good.
 */
export function copyInWorker(job: BackupJob, report: (phase: BackupPhase, percent: number) => void, deadlineMs: number): Promise<CopyOutcome> {
  return new Promise<CopyOutcome>((resolve, reject) => {
    const worker = startWorker("ops/backups/backup-worker.ts");
    const ended = new Promise<void>((resolveEnded) => worker.addEventListener("close", () => resolveEnded()));
    let phase: BackupPhase | null = null;
    let total: number | null = null;
    let settled = false;
    const poll = setInterval(() => {
      // SQLite reports no progress for VACUUM INTO: the copy's size against the pages in use is the estimate.
      if (phase === "snapshot") report("snapshot", percentOf(sizeOrZero(job.partialPath), total, 99));
    }, POLL_MS);
    const deadline = setTimeout(() => settle(() => reject(new BackupDeadlineError(phase, deadlineMs, ended))), deadlineMs);
    const settle = (then: () => void) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      clearTimeout(deadline);
      void worker.terminate();
      then();
    };
    worker.addEventListener("message", (event: MessageEvent<WorkerMessage>) => {
      const m = event.data;
      if (m.type === "phase") {
        if (phase) report(phase, 100);
        phase = m.phase;
        total = m.totalBytes;
        report(m.phase, 0);
      } else if (m.type === "hashed") {
        report("checksum", percentOf(m.bytes, total, 100));
      } else if (m.type === "done") {
        if (phase) report(phase, 100);
        settle(() => resolve({ integrity: m.integrity, sha256: m.sha256, sizeBytes: m.sizeBytes, checkpoint: m.checkpoint }));
      } else {
        settle(() => reject(new BackupWorkerError(m.phase, m.message, false)));
      }
    });
    // An uncaught error, or an end without an answer (an exit, a kill): the backup failed in whatever phase it was.
    worker.addEventListener("error", (event) =>
      settle(() => reject(new BackupWorkerError(phase, `the backup worker failed: ${(event as ErrorEvent).message}`, true))),
    );
    worker.addEventListener("close", (event) =>
      settle(() => reject(new BackupWorkerError(phase, `the backup worker ended (exit code ${(event as CloseEvent).code}) before it answered`, true))),
    );
    worker.postMessage(job);
  });
}
