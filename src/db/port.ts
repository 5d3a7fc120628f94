// The storage port (docs/design.md §8a): one async interface every domain will use, with two engines behind
// it — SQLite over bun:sqlite (src/db/sqlite-engine.ts, the embedded default) and PostgreSQL over Bun's SQL client
// (src/db/postgres-engine.ts, DATABASE_URL=postgres://…). SQL is written once, with `?` placeholders, in the
// portable subset; the engines differ in what they do around it (transactions, placeholders, error codes), never
// in what a caller writes. Both engines pass test/db/port.test.ts, the same cases on each.

import type { StoreHealth } from "./health";

export type Dialect = "sqlite" | "postgres";

/** A bound value. Integers stay JavaScript numbers; an integer past 2^53 is refused rather than rounded. */
export type Param = string | number | boolean | null | Uint8Array;

/**
 * A statement's text and parameters, built but not sent: for a caller that sends it as part of another (a
 * data-modifying CTE on PostgreSQL, src/messenger/store/ledger.ts) or on its own.
 */
export interface Statement {
  sql: string;
  params: readonly Param[];
}

export interface RunResult {
  /** Rows inserted, updated or deleted by the statement. */
  changes: number;
}

/** What a statement runs on: the store itself (outside a transaction) or a transaction's handle. */
export interface Queryable {
  /** The engine behind it, for the few plans that differ by engine (never the SQL a caller writes). */
  readonly dialect: Dialect;
  all<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: readonly Param[]): Promise<T | null>;
  run(sql: string, params?: readonly Param[]): Promise<RunResult>;
}

/**
 * A transaction as a mutation's effect sees it (IdempotencyStore.run): its statements, and `behind` for statements
 * the effect sent and does not wait for (an outbox event). Their failure is the transaction's: they are sent with
 * its last statements and, on PostgreSQL, answered with its COMMIT. The effect says what it leaves in flight; how
 * it rides is the store's.
 */
export interface TxScope extends Queryable {
  behind(work: Promise<unknown>): void;
}

/** `t` with `behind` (TxScope): the transaction's statements, unchanged, and where work left in flight goes. */
export const withBehind = (t: Queryable, behind: (work: Promise<unknown>) => void): TxScope => ({
  dialect: t.dialect,
  all: (sql, params) => t.all(sql, params),
  get: (sql, params) => t.get(sql, params),
  run: (sql, params) => t.run(sql, params),
  behind,
});

/**
 * Runs `body` with `t` as a TxScope whose work left in flight is waited for before `body`'s answer counts: for a
 * caller inside a transaction of its own making (a savepoint, a fixture write), where nothing sends it later.
 */
export async function settlingBehind<T>(t: Queryable, body: (t: TxScope) => Promise<T>): Promise<T> {
  const behind: Array<Promise<unknown>> = [];
  const out = await body(withBehind(t, (work) => void behind.push(work))).catch(async (err: unknown) => {
    await Promise.allSettled(behind);
    throw err;
  });
  for (const r of await Promise.allSettled(behind)) if (r.status === "rejected") throw r.reason;
  return out;
}

/**
 * A read that grows with the data, run apart from the event loop (`Store.apart`, src/db/apart.ts): a named function
 * of a Queryable and plain arguments that only reads; its arguments and answer must survive structured cloning.
 */
export interface ApartTask<A, R> {
  readonly name: string;
  run(q: Queryable, args: A): Promise<R>;
}

export interface TxOptions {
  /**
   * PostgreSQL: how long the whole transaction may take, waiting for a connection included, before it is abandoned
   * (StoreUnavailable) and its connection discarded; the store's DATABASE_TRANSACTION_TIMEOUT_MS otherwise. For
   * the few transactions that are allowed to be long (migrations at start). SQLite ignores it.
   */
  timeoutMs?: number;
  /**
   * PostgreSQL: the transaction may share one COMMIT with others that arrive while its key's batch slot (or every
   * slot) is busy, each in a SAVEPOINT of its own (group commit; SQLite groups every transaction). The key names the
   * contended row it changes (a user's balance: `salutes:<user id>`): transactions with one key run one after the
   * other in one batch stream, never against each other from two batches. For short request transactions on hot
   * paths that change one such row; without a key a transaction runs alone. SQLite ignores it.
   */
  group?: string;
  /**
   * PostgreSQL, with `group`: the body may run at the same time as the other bodies of its batch that say so, in one
   * transaction with no SAVEPOINTs, their statements sent together — a batch then waits about as many round trips as
   * one body does instead of the sum of them. If any body of such a batch fails, the whole batch is rolled back and
   * run again one body at a time, each in its SAVEPOINT (herald_db_batches_redone_total). Only for a body whose
   * checks are conditional statements or unique claims and that decides nothing in TypeScript on rows another body
   * may write (a read-check-write in code would see none of the others' writes): a credit or a debit qualifies, a
   * conversion (a sum read, then a check) does not. SQLite ignores it.
   *
   * `"beside other keys"`: the same, but only in a batch that holds no other body of its key — for a body that
   * decides in TypeScript on rows that only transactions of its own key write (a player's game action: its balances
   * read under the player's lock, its seeds, its grid), which two bodies of one key running at once would both read
   * unchanged. A second transaction of such a key waits for the slot's next batch (`nextBatch`,
   * src/db/postgres-batch-parts.ts); a batch of one key runs one body at a time, in a row without SAVEPOINTs (rolled
   * back whole and run again with them should a body fail, like a batch run together). A key whose transaction failed
   * runs in batches of its own until one of its transactions succeeds (`Apart`), so that its refusals do not roll
   * back other keys' batches again and again.
   */
  together?: boolean | "beside other keys";
  /**
   * PostgreSQL: the body resolves as soon as its last statements are sent, without waiting for their answers; the
   * COMMIT is sent with them, so the transaction waits for the server once less. Their answers still decide: one
   * that fails rolls the transaction back (the COMMIT answers ROLLBACK) and its error is the transaction's. Every
   * statement must be sent before the body resolves; one sent later is refused. Nor may the body catch a failed
   * statement (a SAVEPOINT of its own): if the transaction committed all the same, that body gets an error saying so
   * (the others of its batch their answers), and nothing is run again. In a grouped batch run one body at a time,
   * the next body begins behind such a body's last statements (src/db/postgres-one-by-one.ts); if one of them
   * fails, that body is rolled back to its SAVEPOINT and the next body runs again. SQLite ignores it, and a body must
   * still wait for its statements there (`lastStatements`, src/db/in-order.ts, does either).
   */
  lastAnsweredWithCommit?: boolean;
}

export interface Store extends Queryable {
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws (and the error
   * rethrown). Transactions never interleave with each other or with writes outside them on the same store.
   * On PostgreSQL a transaction that lost a race (deadlock, serialization failure) is run again, a bounded number
   * of times with a random pause, before SerializationFailure reaches the caller; so `fn` may run more than once
   * and must touch nothing but `t` (docs/storage-port.md).
   */
  tx<T>(fn: (t: Queryable) => Promise<T>, options?: TxOptions): Promise<T>;
  /**
   * Readiness: the engine answers (and, on PostgreSQL, is not a standby in recovery) within `timeoutMs` (default:
   * the store's statement deadline); StoreUnavailable otherwise.
   */
  ping(options?: { timeoutMs?: number }): Promise<void>;
  /** The database's availability as this process saw it: outage log lines, /metrics counters, jobs' back-off. */
  readonly health: StoreHealth;
  /**
   * Runs a read that grows with the data apart from the event loop (src/db/apart.ts): on SQLite in the file's read
   * worker, on PostgreSQL on the store as any read. For reads over growing tables on request paths and in jobs.
   */
  apart<A, R>(task: ApartTask<A, R>, args: A): Promise<R>;
  /** The database's size on disk in bytes: the SQLite file and its WAL, or pg_database_size. */
  sizeBytes(): Promise<number>;
  /** The engine and its version as the server reports it ("SQLite 3.51.0", "PostgreSQL 15.18"), for the startup line. */
  version(): Promise<string>;
  close(): Promise<void>;
}

/** A UNIQUE or PRIMARY KEY constraint refused the write; `constraint` as the engine names it. */
export class UniqueViolation extends Error {
  constructor(
    readonly constraint: string,
    options?: { cause?: unknown },
  ) {
    super(`unique constraint ${constraint} violated`, options);
    this.name = "UniqueViolation";
  }
}

/** The transaction lost a race the engine detected (PostgreSQL 40001/40P01, SQLite busy): retry it whole. */
export class SerializationFailure extends Error {
  override name = "SerializationFailure";
}

/**
 * A text value Herald does not store: PostgreSQL's text holds no U+0000 (NUL), and the SQLite engine refuses one
 * too (it could store it), so both engines answer alike. Client input, refused as such (400), never a 500.
 */
export class UnstorableText extends Error {
  override name = "UnstorableText";
}

/** The engine cannot be reached or refuses work now (connection lost, server shutting down, in recovery). */
export class StoreUnavailable extends Error {
  override name = "StoreUnavailable";
}

/** An integer column value as a JavaScript number, refusing one that a double cannot hold exactly. */
export function safeInteger(v: bigint, column: string): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError(`column ${column} holds ${v}, past 2^53: Herald refuses to round it`);
  }
  return Number(v);
}

/** `?, ?, ?` for an IN list of `n` values (n ≥ 1): portable where an array parameter is not (SQLite has none). */
export function placeholders(n: number): string {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`placeholders(${n}): an IN list needs at least one value`);
  return Array.from({ length: n }, () => "?").join(", ");
}

/** The `n` of a count's one row (`SELECT count(*) AS n …`, or a stored counter), 0 when none comes back; int8 is a number (postgres-wire.ts). */
export async function countOf(q: Queryable, sql: string, params?: readonly Param[]): Promise<number> {
  return (await q.get<{ n: number }>(sql, params))?.n ?? 0;
}

/** Whether the statement changed a row: the claim an INSERT … ON CONFLICT DO NOTHING or a guarded UPDATE made. */
export async function changed(q: Queryable, sql: string, params?: readonly Param[]): Promise<boolean> {
  return (await q.run(sql, params)).changes > 0;
}

/** The `id` an INSERT … RETURNING id gave its new row. */
export async function insertedId(q: Queryable, sql: string, params?: readonly Param[]): Promise<number> {
  return (await q.get<{ id: number }>(sql, params))!.id;
}

/**
 * A WHERE built from the filters that are set, each condition with its parameters: optional filters are added only
 * when given, never as `? IS NULL OR …` (PostgreSQL cannot type a parameter that is only compared with NULL, and a
 * planner chooses one plan for every value of it, so such a clause uses no index).
 */
export class Where {
  readonly parts: string[] = [];
  readonly params: Param[] = [];
  add(condition: string, ...values: Param[]): this {
    this.parts.push(condition);
    this.params.push(...values);
    return this;
  }
  when(value: Param | undefined | null, condition: string, times = 1): this {
    return value === undefined || value === null ? this : this.add(condition, ...Array.from({ length: times }, () => value));
  }
  whenAny(column: string, values: readonly Param[]): this {
    return values.length ? this.add(`${column} IN (${placeholders(values.length)})`, ...values) : this;
  }
  get sql(): string {
    return this.parts.length ? `WHERE ${this.parts.join(" AND ")}` : "";
  }
}

/** How many rows of its scope one page of a filtered walk looks through at most (scanWindow). */
export const SCAN_WINDOW = 10_000;

/**
 * A list whose filter no index holds (a substring, a joined table's column, a JSON field) walks its scope in id order
 * and tests each row: a value few rows match walked them all on every request (a q matching none of 1,000,000 users:
 * 568 ms on SQLite, bench/README.md "Users search window"). The window bounds it: `edge` is the id of the
 * SCAN_WINDOW-th row of `scope` (`scope.sql` names the table's own columns) from where the page starts, found down
 * the scope's index, or null when fewer rows remain; the walk adds `id >= edge` (`<=` ascending). After a short page,
 * `resumeAt` says where the next page starts (the edge) when rows lie beyond it, else null.
 */
export async function scanWindow(q: Queryable, table: string, scope: Where, order: "asc" | "desc" = "desc") {
  const dir = order === "desc" ? "DESC" : "ASC";
  const row = await q.get<{ id: number }>(`SELECT id FROM ${table} ${scope.sql} ORDER BY id ${dir} LIMIT 1 OFFSET ${SCAN_WINDOW - 1}`, scope.params);
  const edge = row?.id ?? null;
  return {
    edge,
    bound: order === "desc" ? ">= ?" : "<= ?",
    async resumeAt(short: boolean): Promise<number | null> {
      if (edge === null || !short) return null;
      const beyond = await q.get(`SELECT id FROM ${table} ${scope.sql} AND id ${order === "desc" ? "<" : ">"} ? ORDER BY id ${dir} LIMIT 1`, [
        ...scope.params,
        edge,
      ]);
      return beyond ? edge : null;
    },
  };
}
