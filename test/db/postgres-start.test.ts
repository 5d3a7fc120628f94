// The start-up failures an operator fixes (src/db/postgres-start.ts): each the driver's message in one line with
// the fix (the pooler cases are what PgBouncer answers: transaction pooling without prepared statements, and a
// startup parameter it does not pass on); anything else unchanged.
import { expect, test } from "bun:test";
import { createLogger } from "../../src/log";
import { type Store, StoreUnavailable } from "../../src/db/port";
import { DatabaseStartError, startError, warnIfSessionSettingsIgnored } from "../../src/db/postgres-start";

test("pooler and reachability failures at start name their fix; other errors pass through", () => {
  const cases: Array<[unknown, RegExp]> = [
    [
      new Error('prepared statement "P0" already exists'),
      /PgBouncer in transaction mode needs version 1\.21 or later with max_prepared_statements > 0.*session pooling/,
    ],
    [new Error("unsupported startup parameter: statement_timeout"), /ignore_startup_parameters.*ALTER ROLE herald SET statement_timeout/],
    [new StoreUnavailable("PostgreSQL is in recovery (a standby): it takes no writes"), /takes no writes.*point it at the primary/],
    [new StoreUnavailable("Connection refused"), /did not answer at start.*check the host, port, credentials/],
  ];
  for (const [err, fix] of cases) {
    const out = startError(err);
    expect(out).toBeInstanceOf(DatabaseStartError);
    expect((out as Error).message).toMatch(fix);
    expect((out as Error).message).not.toContain("\n");
  }
  const other = new TypeError("something else");
  expect(startError(other)).toBe(other);
});

// Behind a pooler that drops Herald's startup parameters (PgBouncer's ignore_startup_parameters), the sessions run with
// the role's timeouts: a start whose session lacks the values asked for says so once, with the ALTER ROLE that fixes it
// (test/postgres/pgbouncer.test.ts: with the role's settings, the real pooler's sessions warn of nothing).
test("a session without Herald's timeouts is one warning naming the ALTER ROLE; with them, none", async () => {
  const sessionWith = (statement: string, idle: string) =>
    ({
      all: async () => [
        { role_name: "herald", name: "idle_in_transaction_session_timeout", setting: idle },
        { role_name: "herald", name: "statement_timeout", setting: statement },
      ],
    }) as unknown as Store;
  const want = { statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 60_000 };
  const lines: string[] = [];
  const log = createLogger("info", (l) => lines.push(l));
  await warnIfSessionSettingsIgnored(sessionWith("30000", "60000"), log, want);
  expect(lines).toEqual([]);
  await warnIfSessionSettingsIgnored(sessionWith("0", "60000"), log, want);
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0]!) as Record<string, any>;
  expect(line.level).toBe("warn");
  expect(line.session).toEqual({ statement_timeout_ms: 0 });
  expect(line.asked).toEqual({ statement_timeout_ms: 30_000 });
  expect(line.fix).toContain("ALTER ROLE herald SET statement_timeout = '30s';");
  expect(line.fix).not.toContain("idle_in_transaction_session_timeout");
});
