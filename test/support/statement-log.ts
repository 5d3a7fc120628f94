// Records what the suite sends through the storage port, for the query-plan guard (.ci/query-plans.ts,
// test/support/plan-guard.ts): with HERALD_STATEMENT_LOG set to a file, every distinct statement text a store of
// either engine runs in this process — `all`, `get` and `run`, on the store and on its transactions' handles — is
// appended there once as a JSON line, with one example of its parameters and the source line that sent it. Unset,
// nothing is installed and the engines run untouched.
//
// It wraps the engines' prototypes rather than the store a test app opens: the job registry, the request log, the
// dispatcher and the chain client keep the store they were wired with, and a test may build a store of its own, so
// a wrapper around `ctx.store` would miss their statements. A read task that SQLite runs in the file's read worker
// (src/db/apart.ts) sends its statements from another thread: the task's name and arguments are recorded instead,
// and the guard runs the task again on its own database to see them. What the suite runs in a child process (the
// served binary, `herald serve`) is not recorded: those paths run in process too.
import { appendFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import type { ApartTask, Dialect, Param, Queryable } from "../../src/db/port";
import { PostgresStore } from "../../src/db/postgres-engine";
import { SqliteStore } from "../../src/db/sqlite-engine";

const LOG = process.env.HERALD_STATEMENT_LOG || null;
const ROOT = resolve(import.meta.dir, "../..");

/** A parameter as JSON holds it: bytes and big integers tagged, long text cut (a plan does not depend on it). */
export type LoggedParam = string | number | boolean | null | { $bytes: string } | { $bigint: string };

export interface LoggedStatement {
  engine: Dialect;
  sql: string;
  params: LoggedParam[];
  /** The first source lines outside the engines that led to it, nearest first (`src/salutes/store/ledger.ts:88`). */
  stack: string[];
}

export interface LoggedTask {
  engine: Dialect;
  /** A read task's name (src/workers/read-tasks.ts) and the arguments it was given. */
  task: string;
  args: unknown;
  stack: string[];
}

export type LoggedLine = LoggedStatement | LoggedTask;

/** A text parameter longer than this is cut: the line stays bounded, and no plan turns on the 300th character. */
const MAX_TEXT = 256;
/** A line longer than this is not written (an IN list of thousands); the statement's shorter texts are. */
const MAX_LINE = 64 * 1024;
/** How often a statement first sent by a test's own code is looked at again for a sender in src/. */
const TEST_SIGHTINGS = 20;
/** The test harness's own statements, a new text for every test app's database (test/support/engine.ts). */
const HARNESS = /^\s*(CREATE|DROP) DATABASE\b/i;
/** Argument shapes recorded per read task. */
const TASK_SHAPES = 8;

export function loggedParam(p: unknown): LoggedParam {
  if (p instanceof Uint8Array) return { $bytes: Buffer.from(p).toString("base64") };
  if (typeof p === "bigint") return { $bigint: p.toString() };
  if (typeof p === "string") return p.length > MAX_TEXT ? p.slice(0, MAX_TEXT) : p;
  if (p === undefined) return null;
  return p as LoggedParam;
}

export function paramOf(p: LoggedParam): Param {
  if (p !== null && typeof p === "object") return "$bytes" in p ? new Uint8Array(Buffer.from(p.$bytes, "base64")) : Number(p.$bigint);
  return p;
}

/** Frames of the engines and of this file say nothing about who sent a statement. */
const PLUMBING = /^(test\/support\/statement-log|src\/db\/(sqlite-engine|postgres-(engine|batches|batch-parts|one-by-one|wire)|in-order))\.ts:/;

/** The source lines (relative to the repository) that called into the store, nearest first. */
export function sendersHere(): string[] {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = limit;
  const out: string[] = [];
  for (const line of stack.split("\n")) {
    const m = /(\/[^():]+\.[cm]?[jt]sx?):(\d+)(?::\d+)?\)?\s*$/.exec(line);
    if (!m || m[1]!.includes("/node_modules/")) continue;
    const where = `${relative(ROOT, m[1]!)}:${m[2]}`;
    if (PLUMBING.test(where)) continue;
    out.push(where);
    if (out.length >= 4) break;
  }
  return out;
}

/** Whether the nearest sender is Herald's own code (src/), not a test's SQL. */
export const sentBySource = (stack: readonly string[]): boolean => stack[0]?.startsWith("src/") === true;

/** One key for the texts that differ only in the length of an IN list or of a multi-row VALUES. */
export const shapeOf = (sql: string): string =>
  sql
    .replace(/\?(\s*,\s*\?)+/g, "?, …")
    .replace(/\(\?, …\)(\s*,\s*\(\?, …\))+/g, "(?, …), …")
    .replace(/\s+/g, " ")
    .trim();

function write(line: LoggedLine): void {
  const text = JSON.stringify(line);
  if (text.length <= MAX_LINE) appendFileSync(LOG!, `${text}\n`);
}

/**
 * Per statement shape (`shapeOf`), shared by its texts: sightings left to find a sender in src/ (0 once found, or
 * once given up: then a statement costs one map lookup).
 */
interface Seen {
  left: number;
}
const byText = new Map<string, Seen>();
const byShape = new Map<string, Seen>();

function note(engine: Dialect, sql: string, params: readonly Param[] | undefined): void {
  const key = `${engine} ${sql}`;
  let seen = byText.get(key);
  if (seen?.left === 0) return;
  let first = false;
  if (!seen) {
    if (HARNESS.test(sql)) {
      byText.set(key, { left: 0 });
      return;
    }
    const shape = `${engine} ${shapeOf(sql)}`;
    seen = byShape.get(shape);
    if (!seen) {
      seen = { left: TEST_SIGHTINGS };
      byShape.set(shape, seen);
      first = true;
    }
    byText.set(key, seen);
    if (seen.left === 0) return;
  }
  const stack = sendersHere();
  const bySource = sentBySource(stack);
  if (first || bySource) write({ engine, sql, params: (params ?? []).map(loggedParam), stack });
  seen.left = bySource ? 0 : seen.left - 1;
}

const taskShapes = new Map<string, Set<string>>();

function noteTask(engine: Dialect, task: ApartTask<unknown, unknown>, args: unknown): void {
  let seen = taskShapes.get(task.name);
  if (!seen) taskShapes.set(task.name, (seen = new Set()));
  if (seen.size >= TASK_SHAPES) return;
  // Arguments that differ only in their values ask for the same statements; a null where a value was may not.
  const shape = JSON.stringify(args ?? null, (_k, v) => (typeof v === "string" || typeof v === "number" ? typeof v : v));
  if (seen.has(shape)) return;
  seen.add(shape);
  write({ engine, task: task.name, args: args ?? null, stack: sendersHere() });
}

/** `q` with every statement noted first; nothing else changes (the same promise is handed back). */
export function noting(q: Queryable, record: (sql: string, params: readonly Param[] | undefined) => void): Queryable {
  return {
    get dialect() {
      return q.dialect;
    },
    all: (sql, params) => (record(sql, params), q.all(sql, params)),
    get: (sql, params) => (record(sql, params), q.get(sql, params)),
    run: (sql, params) => (record(sql, params), q.run(sql, params)),
  };
}

type Engine = typeof SqliteStore | typeof PostgresStore;

function install(engine: Engine, dialect: Dialect): void {
  const proto = engine.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const record = (sql: string, params: readonly Param[] | undefined) => note(dialect, sql, params);
  for (const method of ["all", "get", "run"]) {
    const original = proto[method]!;
    proto[method] = function (this: unknown, sql: unknown, params: unknown) {
      record(sql as string, params as readonly Param[] | undefined);
      return original.call(this, sql, params);
    };
  }
  const tx = proto.tx!;
  proto.tx = function (this: unknown, fn: unknown, options: unknown) {
    return tx.call(this, (t: Queryable) => (fn as (t: Queryable) => unknown)(noting(t, record)), options);
  };
  if (dialect === "sqlite") {
    // In the read worker the task's statements are out of reach; in place (a database in memory) they are noted too.
    const apart = proto.apart!;
    proto.apart = function (this: unknown, task: unknown, args: unknown) {
      noteTask(dialect, task as ApartTask<unknown, unknown>, args);
      return apart.call(this, task, args);
    };
  }
}

const INSTALLED = Symbol.for("herald.statement-log");

if (LOG && !(globalThis as Record<symbol, unknown>)[INSTALLED]) {
  (globalThis as Record<symbol, unknown>)[INSTALLED] = true;
  install(SqliteStore, "sqlite");
  install(PostgresStore, "postgres");
}
