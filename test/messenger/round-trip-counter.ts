// Counts the statements a piece of work sends to the store, and the round trips they cost on PostgreSQL (issue 49),
// without touching src/db: the store instance's own tx/get/all/run are wrapped for the test's duration, and each
// transaction's handle with them. A statement issued while another of the same transaction is still in flight
// joins its round trip (Bun's PostgreSQL client pipelines statements issued together on one connection); one issued
// when none is in flight starts a new one. The count is a property of the code, so it is the same on either engine:
// on SQLite a statement's answer is an already-settled promise, but its "done" callback, attached first, runs only
// after the code that issued it awaits — so statements issued together count together there too. BEGIN and COMMIT
// are not counted: each transaction costs those two round trips more on PostgreSQL.
import type { Param, Queryable, Store } from "../../src/db/port";

export interface TxCount {
  statements: number;
  roundTrips: number;
}

export interface StatementCounter {
  /** One entry per transaction body run, in the order they began. */
  readonly transactions: TxCount[];
  /** Statements outside any transaction (each its own round trip). */
  outside: number;
  reset(): void;
  /** Puts the store's own methods back. */
  restore(): void;
}

type Exec = (sql: string, params?: readonly Param[]) => Promise<unknown>;

function counted(exec: Exec, onIssue: () => () => void): Exec {
  return (sql, params) => {
    const done = onIssue();
    const p = exec(sql, params);
    p.then(done, done);
    return p;
  };
}

/** A handle that counts what goes through `t` into `c`. */
function countingHandle(t: Queryable, c: TxCount): Queryable {
  let inFlight = 0;
  const onIssue = () => {
    c.statements++;
    if (inFlight === 0) c.roundTrips++;
    inFlight++;
    return () => {
      inFlight--;
    };
  };
  return {
    dialect: t.dialect,
    all: counted((s, p) => t.all(s, p), onIssue) as Queryable["all"],
    get: counted((s, p) => t.get(s, p), onIssue) as Queryable["get"],
    run: counted((s, p) => t.run(s, p), onIssue) as Queryable["run"],
  };
}

/** Starts counting on `store` (its instance methods are replaced until restore()). */
export function countStatements(store: Store): StatementCounter {
  const own = { tx: store.tx, all: store.all, get: store.get, run: store.run };
  const counter: StatementCounter = {
    transactions: [],
    outside: 0,
    reset() {
      counter.transactions.length = 0;
      counter.outside = 0;
    },
    restore() {
      Object.assign(store, own);
    },
  };
  const outside = () => {
    counter.outside++;
    return () => {};
  };
  const s = store as unknown as Record<"tx" | "all" | "get" | "run", unknown>;
  s.tx = <T>(fn: (t: Queryable) => Promise<T>, options?: Parameters<Store["tx"]>[1]) =>
    own.tx.call(
      store,
      (t) => {
        const c: TxCount = { statements: 0, roundTrips: 0 };
        counter.transactions.push(c);
        return fn(countingHandle(t, c));
      },
      options,
    );
  s.all = counted((sql, p) => own.all.call(store, sql, p), outside);
  s.get = counted((sql, p) => own.get.call(store, sql, p), outside);
  s.run = counted((sql, p) => own.run.call(store, sql, p), outside);
  return counter;
}

/** Round trips on PostgreSQL of everything counted: each transaction's statements, its BEGIN and COMMIT, the rest. */
export const pgRoundTrips = (c: StatementCounter) => c.transactions.reduce((n, t) => n + t.roundTrips + 2, 0) + c.outside;
