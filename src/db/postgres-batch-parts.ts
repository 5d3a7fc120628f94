import type { ReservedSQL, SQL } from "bun";
import type { Queryable } from "./port";

// The pieces of the PostgreSQL engine's transaction runner (src/db/postgres-batches.ts): its bounds, and what it
// keeps of each transaction and of each group key.

/** Deadlocks and serialization failures: a transaction runs again this many times in all, then SerializationFailure. */
export const TX_ATTEMPTS = 4;
/** The random pause before running a transaction again: 2–20 ms, then 4–40 ms, then 8–80 ms. */
export const retryPauseMs = (attempt: number) => (1 + Math.random() * 9) * 2 ** attempt;

/**
 * Transactions in one grouped batch at most (one COMMIT, a SAVEPOINT each). 32, not 16, since a batch's bodies wait
 * about once each (src/db/postgres-one-by-one.ts): one player's plays +21 %, 50 players' +18 % on the benchmark
 * (bench/README.md, "Plays on PostgreSQL"). Not more: each member's SAVEPOINT that writes is a subtransaction with
 * an id (released or not, until the COMMIT), and past 64 in one transaction a PostgreSQL backend overflows its cache
 * of them, which slows every snapshot taken; 32 leaves room for a body's own (src/messenger/store/savepoint.ts).
 */
export const MAX_GROUP = 32;

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** A transaction waiting for its run (see PostgresStore.runBatch). */
export interface Member {
  fn: (t: Queryable) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** performance.now() by which it is answered, and its length for the message. */
  deadline: number;
  ms: number;
  attempt: number;
  /** TxOptions.group: the key of the contended row it changes; null runs it alone. */
  group: string | null;
  /**
   * TxOptions.together (false without a group): its body may run at once with the others of its batch, without a
   * SAVEPOINT; "beside other keys" only in a batch where no other body has its key.
   */
  together: boolean | "beside other keys";
  /** TxOptions.lastAnsweredWithCommit: COMMIT may be sent once its body has resolved, before its last answers. */
  withCommit: boolean;
}

/** After a batch run together (or in a row) had to be redone, the slot's next batches run one body at a time, each in its SAVEPOINT: this many. */
export const CALM_AFTER_REDO = 8;

export interface Slot {
  waiting: Member[];
  running: boolean;
  /** The keys of its waiting and running transactions, with how many of each. */
  keys: Map<string, number>;
  /**
   * The connection its last batch ended on cleanly, kept for the next batch while transactions wait (and released
   * when none do), with the pool it came from: a reserve and a release a batch cost ~6 % of herald's CPU in a
   * profile of the credit benchmark on PostgreSQL (Bun's pool hand-off, an AbortSignal and its listener each time).
   */
  held: { conn: ReservedSQL; from: SQL } | null;
  /** Batches left to run one body at a time with savepoints before bodies run together or in a row again (CALM_AFTER_REDO). */
  calm: number;
}

/** How many keys Apart remembers at most (forgotten all at once past it: they only cost a batch run one at a time). */
export const MAX_APART = 10_000;

/**
 * Keys whose transaction (one that runs together only beside other keys) failed lately: a player out of spins who
 * keeps pressing play. Such a key's transactions run in batches of their own, one body at a time, until one of
 * them succeeds, so that its refusals do not send every batch of other players' actions back to run one body at a
 * time (a batch run together is rolled back whole when one body fails).
 */
export class Apart {
  private readonly keys = new Set<string>();
  has(key: string | null): boolean {
    return key !== null && this.keys.has(key);
  }
  /** After a batch's run one body at a time: the keys of bodies that failed are kept apart, of those that did not freed. */
  note(members: readonly Member[], outcomes: readonly Outcome[]): void {
    members.forEach((m, i) => {
      if (m.together !== "beside other keys" || m.group === null) return;
      if (outcomes[i]!.ok) this.keys.delete(m.group);
      else {
        if (this.keys.size >= MAX_APART) this.keys.clear();
        this.keys.add(m.group);
      }
    });
  }
}

/**
 * Whether a batch's bodies may run together (TxOptions.together): every one may, none that runs only beside other
 * keys shares its key with another (the batch is in key order, so a repeated key has a neighbour), and none's key
 * is kept apart.
 */
export function mayRunTogether(batch: readonly Member[], apart?: Apart): boolean {
  return batch.every(
    (m, i) =>
      m.together && (m.together !== "beside other keys" || (batch[i - 1]?.group !== m.group && batch[i + 1]?.group !== m.group && !apart?.has(m.group))),
  );
}

/**
 * A slot's next batch, taken from the front of its waiting transactions: the first MAX_GROUP of them; but when they
 * all may run together and some run only beside other keys, the first transaction of each key (up to MAX_GROUP),
 * so that the batch can run together — the others of a key wait for the next batch, in their order (a key's
 * transactions still run in the order they came). When only one key waits, its transactions run one body at a
 * time in one batch, as before. Keys kept `apart` stay out of such a batch; when one of them is first in line, the
 * batch is the waiting transactions of those keys (run one body at a time), so they are never passed over for long.
 */
export function nextBatch(waiting: Member[], apart?: Apart): Member[] {
  if (!waiting.some((m) => m.together === "beside other keys") || !waiting.every((m) => m.together)) return waiting.splice(0, MAX_GROUP);
  const keys = new Set<string | null>();
  const setApart = apart?.has(waiting[0]!.group) === true;
  // Apart keys' transactions together when one is first in line; else the first of each other key.
  const taken = setApart ? (m: Member) => apart!.has(m.group) : (m: Member) => !keys.has(m.group) && !apart?.has(m.group);
  const batch: Member[] = [];
  const later: Member[] = [];
  for (const m of waiting) {
    if (batch.length < MAX_GROUP && taken(m)) {
      keys.add(m.group);
      batch.push(m);
    } else later.push(m);
  }
  if (!setApart && batch.length < 2) return waiting.splice(0, MAX_GROUP);
  waiting.splice(0, waiting.length, ...later);
  return batch;
}
