// A Store that forwards every call to a real store (SQLite or PostgreSQL) and records the statements sent through
// it, on the store itself and on its transactions' handles: for tests that count how a function used the port
// (test/db/batched-delete.test.ts: a prune over many rows is several short statements, not one). Nothing is faked;
// the statements run on the real engine.
import type { ApartTask } from "../../src/db/apart";
import type { Param, Queryable, RunResult, Store, TxOptions } from "../../src/db/port";

export interface SentStatement {
  kind: "run" | "all" | "get";
  sql: string;
  params: readonly Param[];
  /** Whether it was sent on a transaction's handle. */
  inTx: boolean;
}

class CountingQueryable implements Queryable {
  constructor(
    protected readonly inner: Queryable,
    readonly sent: SentStatement[],
    private readonly inTx: boolean,
  ) {}

  get dialect() {
    return this.inner.dialect;
  }

  all<T = Record<string, unknown>>(sql: string, params: readonly Param[] = []): Promise<T[]> {
    this.sent.push({ kind: "all", sql, params, inTx: this.inTx });
    return this.inner.all<T>(sql, params);
  }

  get<T = Record<string, unknown>>(sql: string, params: readonly Param[] = []): Promise<T | null> {
    this.sent.push({ kind: "get", sql, params, inTx: this.inTx });
    return this.inner.get<T>(sql, params);
  }

  run(sql: string, params: readonly Param[] = []): Promise<RunResult> {
    this.sent.push({ kind: "run", sql, params, inTx: this.inTx });
    return this.inner.run(sql, params);
  }
}

export class CountingStore extends CountingQueryable implements Store {
  /** Transactions begun through this store (a body run again after a lost race counts once). */
  transactions = 0;

  constructor(private readonly store: Store) {
    super(store, [], false);
  }

  /** The statements that wrote (`run`), in the order sent. */
  get runs(): SentStatement[] {
    return this.sent.filter((s) => s.kind === "run");
  }

  /** Forgets what was recorded so far. */
  reset(): void {
    this.sent.length = 0;
    this.transactions = 0;
  }

  get health() {
    return this.store.health;
  }

  tx<T>(fn: (t: Queryable) => Promise<T>, options?: TxOptions): Promise<T> {
    this.transactions++;
    return this.store.tx((t) => fn(new CountingQueryable(t, this.sent, true)), options);
  }

  ping(options?: { timeoutMs?: number }): Promise<void> {
    return this.store.ping(options);
  }

  apart<A, R>(task: ApartTask<A, R>, args: A): Promise<R> {
    return this.store.apart(task, args);
  }

  sizeBytes(): Promise<number> {
    return this.store.sizeBytes();
  }

  version(): Promise<string> {
    return this.store.version();
  }

  /** The real store belongs to the test app, which closes it. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
