// Starting on PostgreSQL: a server that answers but takes no writes (a standby before its promotion, a
// read-only database) is waited for, and the start-up failures an operator can fix are one line naming the fix —
// not the driver's message with a stack trace.
import type { Logger } from "../log";
import { type Store, StoreUnavailable } from "./port";
import type { PostgresStore } from "./postgres-engine";

/** A start that cannot go on, said in one line with what to do (src/cli/commands.ts prints it without a stack). */
export class DatabaseStartError extends Error {
  override name = "DatabaseStartError";
}

/** While waiting for a writable server: one try a second, a reminder in the log a minute. */
const WAIT_STEP_MS = 1_000;
const REMIND_EVERY_MS = 60_000;

/** The messages of a server that answers but takes no writes (ping, and SQLSTATE 25006 as mapped). */
const takesNoWrites = (err: unknown) => err instanceof StoreUnavailable && /takes no writes/.test(err.message);

/**
 * Returns once the server takes writes. A standby or a read-only server is waited for — the process does not listen
 * meanwhile, so a load balancer sees it as not ready — with a warning, a reminder a minute and a line when it ends;
 * a server that does not answer at all is a start-up error, as before.
 */
export async function waitUntilWritable(store: PostgresStore, log: Logger, sleep = (ms: number) => Bun.sleep(ms)): Promise<void> {
  const since = Date.now();
  let reminded = 0;
  for (;;) {
    try {
      await store.ping();
      if (reminded > 0) log.info("the database takes writes: starting", { waited_ms: Date.now() - since });
      return;
    } catch (err) {
      if (!takesNoWrites(err)) throw err;
      if (reminded === 0 || Date.now() - reminded >= REMIND_EVERY_MS) {
        log.warn("the database takes no writes: waiting for it to become writable before starting", {
          reason: (err as Error).message,
          note: "a standby is waited for until its promotion, a read-only database until writes are allowed again; DATABASE_URL must reach the primary (docs/postgres.md)",
          waited_ms: Date.now() - since,
        });
        log.flush();
        reminded = Date.now();
      }
      await sleep(WAIT_STEP_MS);
    }
  }
}

/** The server's own backstops Herald asks every session for, as startup parameters (src/db/postgres-engine.ts). */
export interface SessionTimeouts {
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/** A duration as PostgreSQL reads it in `SET`: whole seconds where they fit. */
const pgDuration = (ms: number) => (ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`);

/**
 * A pooler that drops Herald's startup parameters (PgBouncer's ignore_startup_parameters) leaves its sessions with the
 * role's or the server's timeouts — by default none, so a stuck statement or a forgotten transaction would hold its
 * server connection for good. Connected directly, the parameters always take; so a session whose values differ went
 * through such a pooler without the role settings: one warning naming the `ALTER ROLE` that sets them.
 */
export async function warnIfSessionSettingsIgnored(store: Store, log: Logger, want: SessionTimeouts): Promise<void> {
  const rows = await store.all<{ role_name: string; name: string; setting: string }>(
    "SELECT current_user AS role_name, name, setting FROM pg_settings WHERE name IN ('statement_timeout', 'idle_in_transaction_session_timeout')",
  );
  const wanted: Record<string, number> = { statement_timeout: want.statementTimeoutMs, idle_in_transaction_session_timeout: want.idleInTransactionTimeoutMs };
  // pg_settings gives both in milliseconds.
  const off = rows.filter((r) => Number(r.setting) !== wanted[r.name]);
  if (off.length === 0) return;
  const name = rows[0]?.role_name ?? "herald";
  const role = /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
  log.warn("the database sessions run without Herald's timeouts", {
    session: Object.fromEntries(off.map((r) => [`${r.name}_ms`, Number(r.setting)])),
    asked: Object.fromEntries(off.map((r) => [`${r.name}_ms`, wanted[r.name]])),
    fix: `a pooler drops these startup parameters (PgBouncer's ignore_startup_parameters): set them on the role, ${off.map((r) => `ALTER ROLE ${role} SET ${r.name} = '${pgDuration(wanted[r.name]!)}';`).join(" ")} (docs/postgres.md "Poolers (PgBouncer)")`,
  });
}

/** A failed start on PostgreSQL as the operator's fix, when it is one of those we know; else the error itself. */
export function startError(err: unknown): unknown {
  const message = err instanceof Error ? err.message : String(err);
  if (/prepared statement "[^"]*" already exists|prepared statement "[^"]*" does not exist/.test(message)) {
    return new DatabaseStartError(
      `PostgreSQL through a pooler that does not keep prepared statements (${message}): Herald prepares its statements, so PgBouncer in transaction mode needs version 1.21 or later with max_prepared_statements > 0 (Debian 12's 1.18 cannot); or use session pooling, keeping its server_reset_query = DISCARD ALL (docs/postgres.md "Poolers (PgBouncer)")`,
      { cause: err },
    );
  }
  if (/unsupported startup parameter/.test(message)) {
    return new DatabaseStartError(
      `the pooler refuses a startup parameter Herald sends (${message}): add statement_timeout and idle_in_transaction_session_timeout to PgBouncer's ignore_startup_parameters and set them on the role instead (ALTER ROLE herald SET statement_timeout = '30s'; ALTER ROLE herald SET idle_in_transaction_session_timeout = '60s', or the values of DATABASE_STATEMENT_TIMEOUT_MS and DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS; docs/postgres.md "Poolers (PgBouncer)")`,
      { cause: err },
    );
  }
  if (takesNoWrites(err)) {
    return new DatabaseStartError(`PostgreSQL at DATABASE_URL takes no writes (${message}): point it at the primary (docs/postgres.md)`, { cause: err });
  }
  if (err instanceof StoreUnavailable) {
    return new DatabaseStartError(
      `PostgreSQL at DATABASE_URL did not answer at start (${message}): check the host, port, credentials and that the server runs; DATABASE_CONNECT_TIMEOUT_MS bounds each try`,
      { cause: err },
    );
  }
  return err;
}
