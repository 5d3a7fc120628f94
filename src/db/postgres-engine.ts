import { SQL } from "bun";
import {
  type Param,
  type Queryable,
  type RunResult,
  safeInteger,
  SerializationFailure,
  type Store,
  StoreUnavailable,
  UniqueViolation,
  UnstorableText,
} from "./port";

// The PostgreSQL engine of the storage port, over Bun's built-in SQL client (the fastest PostgreSQL client
// measured here; see issue 27). The SQL callers write once with `?` placeholders is translated to `$1…$n` once per
// statement text (placeholders inside quotes, identifiers and comments are left alone); int8 values come back as
// JavaScript numbers, and one past 2^53 is refused instead of rounded; SQLSTATEs become the port's typed errors.
// Pool size DATABASE_POOL_MAX (default 10); every session runs with statement_timeout and
// idle_in_transaction_session_timeout, so a stuck query or a forgotten transaction cannot hold a connection.

export interface PostgresOptions {
  url: string;
  poolMax?: number;
  statementTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
  /** pg_stat_activity's application_name for this pool's sessions (which instance a connection belongs to). */
  applicationName?: string;
}

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
]);

/** Bun's SQL errors as the port's typed errors; anything else unchanged. */
function mapped(err: unknown): unknown {
  const e = err as { code?: unknown; errno?: unknown; message?: string; constraint?: unknown };
  const sqlstate = typeof e?.errno === "string" ? e.errno : "";
  if (sqlstate === "23505") {
    const named = typeof e.constraint === "string" ? e.constraint : /unique constraint "([^"]+)"/.exec(e.message ?? "")?.[1];
    return new UniqueViolation(named ?? "unknown", { cause: err });
  }
  if (sqlstate === "40001" || sqlstate === "40P01") return new SerializationFailure(e.message ?? sqlstate, { cause: err });
  // character_not_in_repertoire: a bound text value held U+0000, which PostgreSQL's UTF-8 text cannot.
  if (sqlstate === "22021") return new UnstorableText(e.message ?? sqlstate, { cause: err });
  if (sqlstate.startsWith("08") || sqlstate === "57P01" || sqlstate === "57P02" || sqlstate === "57P03" || sqlstate === "53300") {
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
function decoded<T>(row: Record<string, unknown>, numeric: readonly string[]): T {
  for (const [k, v] of Object.entries(row)) if (typeof v === "bigint") row[k] = safeInteger(v, k);
  for (const k of numeric) {
    const v = row[k];
    if (typeof v === "string") row[k] = /^-?\d+$/.test(v) ? safeInteger(BigInt(v), k) : Number(v);
  }
  return row as T;
}

/** The names of a result's numeric columns (none for most statements). */
function numericColumns(result: unknown): string[] {
  const columns = (result as { columns?: Array<{ name: string; type: number }> }).columns;
  return columns ? columns.filter((c) => c.type === NUMERIC_OID).map((c) => c.name) : [];
}

type Runner = Pick<SQL, "unsafe">;

function handleOf(sql: Runner, translate: (s: string) => string): Queryable {
  const exec = async (text: string, params: readonly Param[]) => {
    try {
      return await sql.unsafe(translate(text), params as Param[]);
    } catch (err) {
      throw mapped(err);
    }
  };
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

export class PostgresStore implements Store {
  readonly dialect = "postgres" as const;
  private readonly sql: SQL;
  private readonly translated = new Map<string, string>();
  private readonly pool: Queryable;

  constructor(options: PostgresOptions) {
    const statementTimeout = options.statementTimeoutMs ?? 30_000;
    const idleInTx = options.idleInTransactionTimeoutMs ?? 60_000;
    this.sql = new SQL({
      url: options.url,
      max: options.poolMax ?? 10,
      bigint: true,
      connection: {
        statement_timeout: String(statementTimeout),
        idle_in_transaction_session_timeout: String(idleInTx),
        ...(options.applicationName ? { application_name: options.applicationName } : {}),
      },
    } as ConstructorParameters<typeof SQL>[0]);
    this.pool = handleOf(this.sql, (s) => this.translate(s));
  }

  private translate(text: string): string {
    let t = this.translated.get(text);
    if (t === undefined) {
      t = toDollarPlaceholders(text);
      if (this.translated.size >= 2000) this.translated.clear();
      this.translated.set(text, t);
    }
    return t;
  }

  all<T = Record<string, unknown>>(text: string, params?: readonly Param[]): Promise<T[]> {
    return this.pool.all<T>(text, params);
  }

  get<T = Record<string, unknown>>(text: string, params?: readonly Param[]): Promise<T | null> {
    return this.pool.get<T>(text, params);
  }

  run(text: string, params?: readonly Param[]): Promise<RunResult> {
    return this.pool.run(text, params);
  }

  async tx<T>(fn: (t: Queryable) => Promise<T>): Promise<T> {
    try {
      return (await this.sql.begin((tx) => fn(handleOf(tx, (s) => this.translate(s))))) as T;
    } catch (err) {
      throw mapped(err);
    }
  }

  async ping(): Promise<void> {
    let row: { recovering: boolean } | null;
    try {
      row = await this.pool.get<{ recovering: boolean }>("SELECT pg_is_in_recovery() AS recovering");
    } catch (err) {
      throw err instanceof StoreUnavailable ? err : new StoreUnavailable(`PostgreSQL does not answer: ${(err as Error).message}`, { cause: err });
    }
    if (row?.recovering) throw new StoreUnavailable("PostgreSQL is in recovery (a standby): it takes no writes");
  }

  async sizeBytes(): Promise<number> {
    return (await this.pool.get<{ n: number }>("SELECT pg_database_size(current_database()) AS n"))?.n ?? 0;
  }

  async version(): Promise<string> {
    const row = await this.pool.get<{ v: string }>("SELECT current_setting('server_version') AS v");
    return `PostgreSQL ${row?.v.split(" ")[0] ?? "(unknown)"}`;
  }

  async close(): Promise<void> {
    await this.sql.close();
  }
}
