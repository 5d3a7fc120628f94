// Issue 76 (PostgreSQL high availability), re-verified: "Every 'the database cannot take this write now' state —
// read-only transaction, in recovery, admin shutdown, cannot-connect-now, too many connections, and whatever else
// PostgreSQL's SQLSTATE classes say — is StoreUnavailable … Never a 500." test/postgres/read-only-database.test.ts
// drives the read-only one on a real cluster; this checks the mapping of each of the others the issue names.
import { expect, test } from "bun:test";
import { StoreUnavailable } from "../../src/db/port";
import { mapped } from "../../src/db/postgres-wire";

/** An error as Bun's SQL client raises a server's refusal: the SQLSTATE in errno. */
const serverError = (sqlstate: string, message: string) => Object.assign(new Error(message), { code: "ERR_POSTGRES_SERVER_ERROR", errno: sqlstate });

test("each state the issue names is StoreUnavailable; a plain bug stays what it was", () => {
  const states: Array<[string, string]> = [
    ["25006", "cannot execute INSERT in a read-only transaction"], // read-only, and a write on a standby in recovery
    ["57P01", "terminating connection due to administrator command"], // admin shutdown
    ["57P02", "terminating connection due to crash of another server process"],
    ["57P03", "the database system is starting up"], // cannot connect now (also a promotion under way)
    ["53300", "sorry, too many clients already"], // too many connections
    ["53100", "could not extend file: No space left on device"],
    ["08006", "connection failure"],
    ["58030", "could not read block"],
  ];
  const mappedAs = states.map(([s, m]) => [s, mapped(serverError(s, m)) instanceof StoreUnavailable]);
  expect(mappedAs).toEqual(states.map(([s]) => [s, true]));
  const bug = serverError("42703", 'column "nope" does not exist');
  expect(mapped(bug)).toBe(bug);
});
