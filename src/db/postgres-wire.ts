import { type Param, type Queryable, type RunResult, SerializationFailure, safeInteger, StoreUnavailable, UniqueViolation, UnstorableText } from "./port";

// What the PostgreSQL engine (src/db/postgres-engine.ts) translates between the port and Bun's SQL client: `?`
// placeholders into `$n`, Bun's errors and SQLSTATEs into the port's typed errors (and Herald's own deadlines into
// StoreUnavailable), int8 and numeric values into JavaScript numbers (refusing one past 2^53), rows into the
// port's handle.

/** `?` → `$n`, outside '…' strings, "…" identifiers, -- and /* comments, and $tag$…$tag$ bodies. */
export function toDollarPlaceholders(sql: string): string {
  let out = "";
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop + 1);
      i = stop;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      const stop = end === -1 ? sql.length : end + 2;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === "$" && /^\$[A-Za-z_]*\$/.test(sql.slice(i))) {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))![0];
      const end = sql.indexOf(tag, i + tag.length);
      const stop = end === -1 ? sql.length : end + tag.length;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === "?") {
      out += `$${++n}`;
    } else {
      out += c;
    }
  }
  return out;
}

const UNAVAILABLE_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ERR_POSTGRES_QUERY_CANCELLED",
]);

/** Bun's SQL errors as the port's typed errors; anything else unchanged. */
export function mapped(err: unknown): unknown {
  const e = err as { code?: unknown; errno?: unknown; message?: string; constraint?: unknown };
  const sqlstate = typeof e?.errno === "string" ? e.errno : "";
  if (sqlstate === "23505") {
    const named = typeof e.constraint === "string" ? e.constraint : /unique constraint "([^"]+)"/.exec(e.message ?? "")?.[1];
    return new UniqueViolation(named ?? "unknown", { cause: err });
  }
  if (sqlstate === "40001" || sqlstate === "40P01") return new SerializationFailure(e.message ?? sqlstate, { cause: err });
  // character_not_in_repertoire: a bound text value held U+0000, which PostgreSQL's UTF-8 text cannot.
  if (sqlstate === "22021") return new UnstorableText(e.message ?? sqlstate, { cause: err });
  // query_canceled: the server's statement_timeout, or Herald's own deadline cancelling a statement it gave up on.
  if (sqlstate === "57014") return new StoreUnavailable(`PostgreSQL cancelled a statement: ${e.message ?? sqlstate}`, { cause: err });
  // read_only_sql_transaction: a write reached a standby (a pooler or balancer pointed at it), or the server is
  // read-only for now (default_transaction_read_only, as managed databases set it on a full disk). An outage, not a
  // bug in the request: 503, and the gate stays closed until the probe finds the server writable (writableCheck).
  if (sqlstate === "25006") return new StoreUnavailable(`PostgreSQL takes no writes now (read-only): ${e.message ?? sqlstate}`, { cause: err });
  // connection_exception (08…), insufficient_resources (53…: disk full, out of memory, too many connections),
  // operator_intervention (57P01–57P05: shutdown, crash shutdown, cannot connect now, database dropped, idle session
  // timeout), and system_error's io_error (58030).
  if (sqlstate.startsWith("08") || sqlstate.startsWith("53") || /^57P0[1-5]$/.test(sqlstate) || sqlstate === "58030") {
    return new StoreUnavailable(e.message ?? sqlstate, { cause: err });
  }
  if (typeof e?.code === "string" && UNAVAILABLE_CODES.has(e.code)) return new StoreUnavailable(e.message ?? e.code, { cause: err });
  return err;
}

/** PostgreSQL's numeric type (what SUM and AVG of bigint answer); Bun's client returns it as text. */
const NUMERIC_OID = 1700;

/**
 * A row with its int8 (BigInt) values as numbers, refusing those past 2^53, and its numeric values as numbers too
 * — an integral one exactly or refused the same way (SUM of amounts), a fractional one as the nearest double, as
 * SQLite answers AVG. Text that only looks like a number (an external id "42") is left alone: the column's type
 * decides, not the value.
 */
export function decoded<T>(row: Record<string, unknown>, numeric: readonly string[]): T {
  for (const [k, v] of Object.entries(row)) if (typeof v === "bigint") row[k] = safeInteger(v, k);
  for (const k of numeric) {
    const v = row[k];
    if (typeof v === "string") row[k] = /^-?\d+$/.test(v) ? safeInteger(BigInt(v), k) : Number(v);
  }
  return row as T;
}

/** The names of a result's numeric columns (none for most statements). */
export function numericColumns(result: unknown): string[] {
  const columns = (result as { columns?: Array<{ name: string; type: number }> }).columns;
  return columns ? columns.filter((c) => c.type === NUMERIC_OID).map((c) => c.name) : [];
}

/** A statement Bun has started (its promise) that can be asked to stop: on the server if it is running there. */
export type Cancellable = Promise<unknown> & { cancel(): unknown };

/**
 * The port's handle over one runner (the pool, or a transaction). `exec` runs a statement: the pool's races it
 * against the statement deadline; a transaction's notes the statement in flight, so that the transaction's
 * deadline can cancel it on the server.
 */
export function handleOf(exec: (text: string, params: readonly Param[]) => Promise<unknown>): Queryable {
  return {
    dialect: "postgres",
    async all<T>(text: string, params: readonly Param[] = []) {
      const rows = (await exec(text, params)) as Array<Record<string, unknown>>;
      const numeric = numericColumns(rows);
      return rows.map((r) => decoded<T>(r, numeric));
    },
    async get<T>(text: string, params: readonly Param[] = []) {
      const rows = (await exec(text, params)) as Array<Record<string, unknown>>;
      return rows.length ? decoded<T>(rows[0]!, numericColumns(rows)) : null;
    },
    async run(text: string, params: readonly Param[] = []): Promise<RunResult> {
      const result = (await exec(text, params)) as { count?: number };
      return { changes: result.count ?? 0 };
    },
  };
}

/** The deadline-expired error: the database is unavailable as far as this request is concerned. */
export function deadlineError(what: string, ms: number, setting: string): StoreUnavailable {
  const e = new StoreUnavailable(`PostgreSQL did not answer ${what} within ${ms} ms (${setting})`);
  DEADLINES.add(e);
  return e;
}

/**
 * Errors that are Herald's own deadlines. A slow statement on a live server ends at one as much as a server that
 * is gone, so a deadline alone says nothing of the server: its cancellation tells (see watchCancelled).
 */
export const DEADLINES = new WeakSet<Error>();

/**
 * Whether a COMMIT's answer says the server rolled the transaction back (a statement of it had failed). After a body
 * sent with its COMMIT (TxOptions.lastAnsweredWithCommit) failed, it must: anything else means the transaction
 * committed because a body caught its failed statement in a SAVEPOINT, which such a body must not do. Then the batch
 * is not run again: each body that succeeded is answered, and one that failed gets CAUGHT_FAILURE.
 */
export const rolledBackAt = (answer: unknown): boolean => (answer as { command?: string } | undefined)?.command === "ROLLBACK";
export const CAUGHT_FAILURE = "a transaction sent with its COMMIT committed although one of its statements failed: its body caught the failure";

/** A live server answers a cancellation within this long; one that does not is taken as unreachable. */
export const CANCEL_ANSWER_MS = 1_000;

/** How an error ends an interaction, for the store's outage gate. */
export function outcomeOf(e: unknown): "answered" | "unreached" | "deadline" {
  if (!(e instanceof StoreUnavailable)) return "answered";
  return DEADLINES.has(e) ? "deadline" : "unreached";
}

/**
 * A statement without parameters as a template object, so that Bun's client prepares it on the connection like any
 * other: given to `unsafe` it goes by the simple protocol, which Bun 1.4.5 does not pipeline — BEGIN, SAVEPOINT,
 * RELEASE and COMMIT each waited for every answer before them and held back the statements after them (a round trip
 * each). Prepared, they ride with the statements around them (test/conventions/internals.test.ts holds both).
 */
export function prepared(text: string): TemplateStringsArray {
  const strings = [text];
  Object.defineProperty(strings, "raw", { value: strings });
  return strings as unknown as TemplateStringsArray;
}

/**
 * The statement that tells whether the server takes writes (the outage probe, readiness): a primary, and not
 * read-only (default_transaction_read_only, a standby, a managed database's full-disk mode).
 */
export const WRITABLE_CHECK = "SELECT pg_is_in_recovery() AS recovering, current_setting('transaction_read_only') AS read_only";

/** Why a server answering WRITABLE_CHECK with `row` takes no writes; null when it does. */
export function notWritable(row: { recovering?: unknown; read_only?: unknown } | undefined): string | null {
  if (row?.recovering === true) return "PostgreSQL is in recovery (a standby): it takes no writes";
  if (row?.read_only === "on")
    return "PostgreSQL is read-only (transaction_read_only is on: default_transaction_read_only, or a managed database's full-disk mode): it takes no writes";
  return null;
}
