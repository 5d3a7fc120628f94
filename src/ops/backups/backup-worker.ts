// The backup's worker (started by in-worker.ts through src/worker-entry.ts, an extra entrypoint of the compiled binary).
// bun:sqlite runs statements synchronously: on the service's thread a 2 GB backup held every request, /healthz
// included, for 112 s. Here the snapshot, the integrity check and the sha256 run on this thread's own connections and
// only read the live database (VACUUM INTO is a read transaction in WAL mode). It writes only the temp copy it is given.
import { statSync } from "node:fs";
import { integrityOf, sqliteCheckpointPassive, sqliteSnapshotBytesEstimate, sqliteSnapshotInto } from "../../db/sqlite-file";
import type { BackupFault, BackupJob, BackupPhase, WorkerMessage } from "./worker-protocol";

declare const self: Worker;

/** How often the checksum reports its bytes: often enough for a per-cent progress on 100 MB, rarely on 10 GB. */
const HASH_REPORT_BYTES = 1024 * 1024;

const send = (m: WorkerMessage) => self.postMessage(m);

/** A crash asked for by a test (BackupFault.crashIn): it must escape run(), as a real one would. */
class InjectedCrash extends Error {}

/** sha256 of the copy, streamed (memory stays flat for any size), reporting the bytes read as it goes. */
async function sha256Reporting(path: string): Promise<{ sha256: string; sizeBytes: number }> {
  const hasher = new Bun.CryptoHasher("sha256");
  let bytes = 0;
  let reported = 0;
  for await (const chunk of Bun.file(path).stream()) {
    hasher.update(chunk);
    bytes += chunk.byteLength;
    if (bytes - reported >= HASH_REPORT_BYTES) {
      send({ type: "hashed", bytes });
      reported = bytes;
    }
  }
  send({ type: "hashed", bytes });
  return { sha256: hasher.digest("hex"), sizeBytes: bytes };
}

async function run(job: BackupJob): Promise<void> {
  let phase: BackupPhase = "snapshot";
  const begin = (next: BackupPhase, totalBytes: number | null, fault?: BackupFault) => {
    phase = next;
    if (fault?.crashIn === next) throw new InjectedCrash(`injected crash as ${next} begins (a test's BackupFault)`);
    send({ type: "phase", phase: next, totalBytes });
    // Blocks this thread for good, as a statement stuck in SQLite would (only the backup's deadline ends it).
    if (fault?.hangIn === next) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  };
  try {
    begin("snapshot", sqliteSnapshotBytesEstimate(job.dbPath), job.fault);
    sqliteSnapshotInto(job.dbPath, job.partialPath);
    // The snapshot's read transaction held every checkpoint back: the WAL grew for its whole duration.
    const checkpoint = sqliteCheckpointPassive(job.dbPath);
    begin("integrity_check", null, job.fault);
    const integrity = job.fault?.integrity ?? integrityOf(job.partialPath);
    if (integrity !== "ok") {
      // A copy that fails its check is not hashed: the main thread removes it.
      send({ type: "done", integrity, sha256: "", sizeBytes: 0, checkpoint });
      return;
    }
    begin("checksum", statSync(job.partialPath).size, job.fault);
    const { sha256, sizeBytes } = await sha256Reporting(job.partialPath);
    send({ type: "done", integrity, sha256, sizeBytes, checkpoint });
  } catch (err) {
    if (err instanceof InjectedCrash) throw err;
    send({ type: "failed", phase, message: (err as Error).message });
  }
}

// One job per worker: the main thread terminates it once it has the answer (or gave up on it).
self.onmessage = (event: MessageEvent<BackupJob>) => {
  void run(event.data);
};
