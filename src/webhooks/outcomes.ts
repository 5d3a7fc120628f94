import { SerializationFailure, type Store } from "../db/port";
import { recordSuccesses, type Success } from "./lease-store";

/**
 * Runs a transaction again, whole, when it lost a race the engine detected — a deadlock or serialization failure
 * on PostgreSQL, a database busy past its timeout on SQLite (SerializationFailure) — a few times at most.
 */
export async function retried<T>(run: () => Promise<T>, times = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof SerializationFailure) || attempt >= times) throw err;
    }
  }
}

/** Successes written in one transaction at most (two statements of this many rows each). */
const MAX_BATCH = 64;

/**
 * Writes successful outcomes together: those that arrive while a write is in flight go into the next one, one
 * transaction of two statements for up to MAX_BATCH of them (recordSuccesses). Only a success that changes
 * nothing but its delivery and its attempt comes here; one that must also touch its webhook (clear failing_since)
 * or queue events (a failure) is written alone by the dispatcher. Each caller learns whether its delivery was
 * still held, once its batch has committed; a batch that fails fails each of its callers, as its own
 * transaction would have.
 */
export class SuccessWriter {
  private queue: Array<{ success: Success; done: (held: boolean) => void; failed: (err: unknown) => void }> = [];
  private writing = false;

  constructor(private readonly store: Store) {}

  write(success: Success): Promise<boolean> {
    return new Promise<boolean>((done, failed) => {
      this.queue.push({ success, done, failed });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          const rows = batch.map((b) => b.success);
          const held = await retried(() => this.store.tx((t) => recordSuccesses(t, rows)));
          for (const b of batch) b.done(held.has(b.success.id));
        } catch (err) {
          for (const b of batch) b.failed(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
