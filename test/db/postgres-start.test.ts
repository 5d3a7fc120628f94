// The start-up failures an operator fixes (src/db/postgres-start.ts): each the driver's message in one line with
// the fix (the pooler cases are what PgBouncer answers: transaction pooling without prepared statements, and a
// startup parameter it does not pass on); anything else unchanged.
import { expect, test } from "bun:test";
import { StoreUnavailable } from "../../src/db/port";
import { DatabaseStartError, startError } from "../../src/db/postgres-start";

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
