import { inOrder } from "./in-order";
import type { Dialect, Param, Queryable, Store } from "./port";

// Prunes and bulk deletes in bounded batches (docs/storage-port.md "Bulk deletes: in batches"). One statement over
// every doomed row holds SQLite's one JavaScript thread for as long as it runs (1.7 s for a million request_log rows:
// every request waited) and loads PostgreSQL alike; a batch of a few thousand rows takes milliseconds, and the event
// loop runs between batches. A call stops after `maxMs` and leaves the rest to the next one (the job's next tick).
// This file names no table: the domain's store function that calls it passes its table, condition and children, so
// the SQL naming a domain's tables stays in that domain's store files (test/conventions/layering.test.ts).

/** Rows per batch: a statement (or a batch's transaction) of a few milliseconds on either engine. */
export const DEFAULT_BATCH_ROWS = 2_000;
/**
 * Rows per batch of a table whose rows leave in an order unrelated to another of its indexes, keyed at random (a
 * nonce, an Idempotency-Key): each row deleted changes a different page of that index. 2,000 such rows dirty more
 * pages than SQLite's page cache holds (2 MB by default), which then spills them mid-statement: ~100 ms a batch of
 * 400,000 nonces or idempotency records, against ~7 ms for 500 (measured on SQLite).
 */
export const SCATTERED_BATCH_ROWS = 500;
/** How long one call may go on deleting, batch after batch, before it leaves the rest to the next call. */
export const DEFAULT_MAX_MS = 2_000;
/**
 * The bound of a prune that runs once a day: a day's rows must fit in one run (2 s was about two million request_log
 * rows on SQLite, but only some 100,000 webhook deliveries with their attempts on PostgreSQL), and the batches are as
 * short as ever — only more of them run, with the event loop free between each.
 */
export const DAILY_PRUNE_MAX_MS = 30_000;

export interface BatchBound {
  /** Rows per batch (per statement, or per transaction when children go with their parents). */
  batchRows?: number;
  /** No batch begins after this long (wall time since the call began); the first batch always runs. */
  maxMs?: number;
}

export interface BatchedDeleteResult {
  /** Rows of the table deleted (children not counted). */
  deleted: number;
  /** Statements sent, for tests and logs: one per batch for a table alone. */
  statements: number;
  /** False when the call stopped at its time bound with rows possibly left: the next call continues. */
  done: boolean;
}

/** deleteInBatches' answer: also the child rows deleted (or detached) with the rows, by child table. */
export interface BatchedDeleteWithChildren extends BatchedDeleteResult {
  children: Record<string, number>;
}

/** Rows of another table that reference the doomed rows' key, dealt with in each batch's transaction, before them. */
export interface ChildRows {
  table: string;
  /** The child's column that holds the parent's key. */
  column: string;
  /** "delete" (the default): the child rows go with their parent; "detach": they stay, their column set to NULL. */
  action?: "delete" | "detach";
}

export interface BatchedDelete extends BatchBound {
  table: string;
  /** The doomed rows' condition over the table's own columns, `?` placeholders; its columns should be indexed. */
  where: string;
  params: readonly Param[];
  /**
   * The table's integer primary key, which `children` reference (required with them). A table alone is deleted by
   * the row's own address whatever its key (rowid on SQLite, ctid on PostgreSQL): measured on PostgreSQL over a
   * million rows, a batch of 2,000 took 1.6 ms by ctid, 2.8 ms by `id = ANY(ARRAY(…))` and 4.1 ms by
   * `id IN (SELECT …)`; on SQLite the rowid is the integer key itself.
   */
  key?: string;
  /** Rows referencing the doomed rows by `key`, dealt with in each batch's transaction. */
  children?: readonly ChildRows[];
}

/** One batch's work: rows deleted and statements sent. */
export interface BatchOutcome {
  deleted: number;
  statements: number;
  /** Rows the batch chose (its LIMIT's answer), when that differs from `deleted`: fewer than the limit ends the loop. */
  chosen?: number;
}

/**
 * Runs `batch(limit)` until a batch chooses fewer than `limit` rows (none are left) or `maxMs` has passed since the
 * call began, yielding to the event loop between batches so that requests (and, on SQLite, other writes) run in
 * between. For deletes that need more than deleteInBatches offers (status snapshots keep their check set readable).
 */
export async function repeatBatches(bound: BatchBound, batch: (limit: number) => Promise<BatchOutcome>): Promise<BatchedDeleteResult> {
  const limit = Math.max(1, Math.floor(bound.batchRows ?? DEFAULT_BATCH_ROWS));
  const maxMs = bound.maxMs ?? DEFAULT_MAX_MS;
  const began = performance.now();
  let deleted = 0;
  let statements = 0;
  for (;;) {
    const b = await batch(limit);
    deleted += b.deleted;
    statements += b.statements;
    if ((b.chosen ?? b.deleted) < limit) return { deleted, statements, done: true };
    if (performance.now() - began >= maxMs) return { deleted, statements, done: false };
    // setImmediate runs after the I/O callbacks already waiting: every request that arrived during the batch is
    // served before the next batch takes the thread (and SQLite's write lock) again.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Deletes the rows of `table` matching `where` in batches of `batchRows`, each batch its own short statement — or,
 * with children, its own short transaction: the parents are chosen first (LIMIT), then their children and they are
 * deleted together, so a batch never leaves a child without its parent. `store` is the store itself, never a
 * transaction's handle: the batches commit one by one.
 */
export async function deleteInBatches(store: Store, d: BatchedDelete): Promise<BatchedDeleteWithChildren> {
  const children: Record<string, number> = Object.fromEntries((d.children ?? []).map((c) => [c.table, 0]));
  if (d.children?.length) {
    const key = d.key;
    if (!key) throw new Error(`deleteInBatches(${d.table}): children need the table's key`);
    const r = await repeatBatches(d, async (limit) => {
      const b = await store.tx((t) => parentsWithChildren(t, d, key, limit));
      b.childChanges.forEach((n, i) => {
        children[d.children![i]!.table]! += n;
      });
      return b;
    });
    return { ...r, children };
  }
  const sql = BY_ADDRESS[store.dialect](d.table, d.where);
  const r = await repeatBatches(d, async (limit) => ({ deleted: (await store.run(sql, [...d.params, limit])).changes, statements: 1 }));
  return { ...r, children };
}

/**
 * A batch of a table alone, by the row's own address. SQLite: its rowid (the integer key, when it has one).
 * PostgreSQL has no rowid: ctid (the row version's place in the heap) is stable for the statement, and
 * `ctid = ANY(ARRAY(…))` is a TID scan of the chosen rows, where `ctid IN (SELECT …)` would plan a join over the
 * table. A row another session changed meanwhile has a new ctid and is skipped, which is right: it may no longer be
 * doomed.
 */
const BY_ADDRESS: Record<Dialect, (table: string, where: string) => string> = {
  sqlite: (table, where) => `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT ?)`,
  postgres: (table, where) => `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE ${where} LIMIT ?))`,
};

/**
 * A list of integer keys as ONE parameter, so that every batch sends the same statement text (prepared once) however
 * many rows it chose. SQLite reads a JSON array through json_each; PostgreSQL takes an array literal. Exported for a
 * domain's own condition over a bounded list of keys (the sandbox reset's users, src/sandbox/reset-batches.ts).
 */
export const IN_KEY_LIST: Record<Dialect, { sql: string; encode(keys: readonly number[]): string }> = {
  sqlite: { sql: "IN (SELECT value FROM json_each(?))", encode: (keys) => JSON.stringify(keys) },
  postgres: { sql: "= ANY(CAST(? AS bigint[]))", encode: (keys) => `{${keys.join(",")}}` },
};

/**
 * PostgreSQL: the chosen parents are locked, in key order, before their children go, so that no other session adds
 * a child to one (a webhook replay's attempt, an incident's update) or changes it back out of the doomed set between
 * the choice and the delete; the condition is checked again under the lock. Key order is the order every other
 * locker of these rows uses (the sandbox reset's deliveries), so two of them wait instead of deadlocking. SQLite
 * needs nothing: the transaction holds the one writer from its BEGIN.
 */
const LOCK_CHOSEN: Record<Dialect, ((table: string, key: string, where: string) => string) | null> = {
  sqlite: null,
  postgres: (table, key, where) => `SELECT ${key} FROM ${table} WHERE ${key} ${IN_KEY_LIST.postgres.sql} AND ${where} ORDER BY ${key} FOR UPDATE`,
};

async function parentsWithChildren(t: Queryable, d: BatchedDelete, key: string, limit: number): Promise<BatchOutcome & { childChanges: number[] }> {
  // The choice follows the condition's index (no ORDER BY on the key: sorting every doomed row to take the first
  // few would read them all at each batch).
  const chosen = (await t.all<Record<string, number>>(`SELECT ${key} FROM ${d.table} WHERE ${d.where} LIMIT ?`, [...d.params, limit])).map((r) => r[key]!);
  if (chosen.length === 0) return { deleted: 0, statements: 1, chosen: 0, childChanges: [] };
  const list = IN_KEY_LIST[t.dialect];
  let statements = 1;
  let keys = chosen;
  const lock = LOCK_CHOSEN[t.dialect];
  if (lock) {
    keys = (await t.all<Record<string, number>>(lock(d.table, key, d.where), [list.encode(chosen), ...d.params])).map((r) => r[key]!);
    statements++;
  }
  const param = list.encode(keys);
  const children = (d.children ?? []).map((c) =>
    c.action === "detach"
      ? t.run(`UPDATE ${c.table} SET ${c.column} = NULL WHERE ${c.column} ${list.sql}`, [param])
      : t.run(`DELETE FROM ${c.table} WHERE ${c.column} ${list.sql}`, [param]),
  );
  // Sent together (one round trip on PostgreSQL), run in call order: the children before their parents.
  const done = await inOrder(...children, t.run(`DELETE FROM ${d.table} WHERE ${key} ${list.sql}`, [param]));
  const parents = done.pop()!;
  return { deleted: parents.changes, statements: statements + done.length + 1, chosen: chosen.length, childChanges: done.map((r) => r.changes) };
}

/** For a prune job's log line: `{ done: false }` when any part stopped at its time bound (the next tick goes on). */
export function unfinished(...results: readonly BatchedDeleteResult[]): { done?: false } {
  return results.every((r) => r.done) ? {} : { done: false };
}
