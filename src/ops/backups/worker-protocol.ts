// The messages between a backup and its worker (backup-worker.ts). Naming the backup, its manifest and its audit row
// stay on the main thread; the worker only writes the temp file it was given.

export const BACKUP_PHASES = ["snapshot", "integrity_check", "checksum"] as const;
export type BackupPhase = (typeof BACKUP_PHASES)[number];

/**
 * A fault to inject, for tests only: no route, page or CLI command sets one. `crashIn` makes the worker die (an
 * uncaught error) as that phase begins, as a crash would; `hangIn` makes it block there and never answer, as a read
 * stuck on its disk would; `integrity` makes it report the copy as corrupt.
 */
export interface BackupFault {
  crashIn?: BackupPhase;
  hangIn?: BackupPhase;
  integrity?: string;
}

/** What the worker is told to do: copy `dbPath` into `partialPath` and check and hash that copy. */
export interface BackupJob {
  dbPath: string;
  partialPath: string;
  fault?: BackupFault;
}

export type WorkerMessage =
  /** A phase begins; `totalBytes` is what it will read or write (an estimate for the snapshot, none for the check). */
  | { type: "phase"; phase: BackupPhase; totalBytes: number | null }
  /** Bytes of the copy hashed so far (the checksum phase). */
  | { type: "hashed"; bytes: number }
  /** The copy is written, checked and hashed; `integrity` is "ok" or what SQLite reported. */
  | { type: "done"; integrity: string; sha256: string; sizeBytes: number; checkpoint: CheckpointResult | null }
  /** A phase failed with this message (the worker then ends on its own). */
  | { type: "failed"; phase: BackupPhase; message: string };

/** PRAGMA wal_checkpoint's answer: busy 1 when it could not complete, and the WAL's frames and those copied back. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}
