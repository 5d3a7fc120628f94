import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { type ExpectedKey, expectedKey, expectedKeyOnStore, judgeKey, judgeKeyOnStore, type KeyVerdict } from "../auth/master-key-check";
import { devKeyFile, type FoundKey, findMasterKey, SecretBox } from "../auth/secret-box";
import type { Config } from "../config";
import type { PostgresStore } from "../db/postgres-engine";
import { onSqliteFile } from "../db/sqlite-file";

// The master key of a CLI command. `herald serve` generates a development key when it finds none; a command must not:
// run from another folder against a shared database (PostgreSQL, or a SQLite file named by HERALD_DB_PATH), it
// would leave a stray data/master.key behind, and the key it made opens nothing. So a command looks first — the
// environment's HERALD_MASTER_KEY, then master.key beside the SQLite file (HERALD_DB_PATH), the order serve uses —
// and asks the database which key it expects before anything is opened for writing.

/** A command that needs the database's master key does not have it. Nothing was written; exit 78. */
export class MasterKeyUnavailable extends Error {
  override name = "MasterKeyUnavailable";
}

/**
 * `read-only`: the command opens no secret and changes nothing the key guards (`jobs list`, `keys list`,
 * `admin-token list`, `backup`): it runs without the key, with a note. `needs-key`: every other command.
 */
export type KeyNeed = "needs-key" | "read-only";

export interface CliSecrets {
  /** The key to open the context with; undefined: the default (a development key generated beside a new SQLite file). */
  secrets?: SecretBox;
  /** For the operator on stderr: the command runs without the database's key. */
  note?: string;
}

/** What the database says about keys: null when there is no database yet (a SQLite file not created). */
async function inspect(config: Config, found: FoundKey | null): Promise<{ expected: ExpectedKey; verdict: KeyVerdict | null } | null> {
  if (config.database.engine === "sqlite") {
    if (config.dbPath === ":memory:" || !existsSync(config.dbPath)) return null;
    return onSqliteFile(config.dbPath, (q) => ({ expected: expectedKey(q), verdict: found ? judgeKey(q, found.box) : null }));
  }
  return onPostgres(config, async (store) => ({
    expected: await expectedKeyOnStore(store),
    verdict: found ? await judgeKeyOnStore(store, found.box) : null,
  }));
}

/** A command's one connection to the configured PostgreSQL: pinged before `use`, closed after it, whatever happens. */
export async function onPostgres<T>(config: Config, use: (store: PostgresStore) => Promise<T>): Promise<T> {
  const { PostgresStore } = await import("../db/postgres-engine");
  const d = config.database;
  const store = new PostgresStore({
    url: d.url!,
    poolMax: 1,
    statementTimeoutMs: d.statementTimeoutMs,
    idleInTransactionTimeoutMs: d.idleInTransactionTimeoutMs,
    connectTimeoutMs: d.connectTimeoutMs,
  });
  try {
    try {
      await store.ping();
    } catch (err) {
      // One line with the fix, as `serve` says it (src/db/postgres-start.ts): a command does not wait for a standby.
      throw (await import("../db/postgres-start")).startError(err);
    }
    return await use(store);
  } finally {
    await store.close();
  }
}

function looked(config: Config): string {
  const file = devKeyFile(config);
  return `HERALD_MASTER_KEY is not set${file ? ` and there is no ${resolve(file)}` : ""}`;
}

function remedy(config: Config): string {
  const file = devKeyFile(config);
  return `give the command the key the service runs with (HERALD_MASTER_KEY=… herald …)${file ? ` or copy the service's master.key to ${resolve(file)}` : ""}`;
}

/**
 * The key a CLI command opens the database with. Refuses (MasterKeyUnavailable) a command that needs the key when
 * the database expects one it does not have — a recorded fingerprint that differs, or none found here — having
 * written nothing; a read-only command gets a key that seals and opens nothing, and a note to print.
 */
export async function cliSecrets(config: Config, need: KeyNeed): Promise<CliSecrets> {
  const found = findMasterKey(config);
  const seen = await inspect(config, found);
  if (found && (!seen || seen.verdict?.opens)) return { secrets: found.box };
  const expected = seen?.expected ?? { recorded: null, sealed: null };
  const fingerprint = expected.recorded?.fingerprint ?? null;
  const wants = fingerprint
    ? `this database expects the master key with fingerprint ${fingerprint}`
    : `this database's secrets (${expected.sealed ?? "a stored secret"}) were sealed with a master key it does not name (it predates key checks)`;
  let problem: string | null = null;
  if (found)
    problem = `${wants}, but ${found.source === "HERALD_MASTER_KEY" ? "HERALD_MASTER_KEY" : `the key in ${resolve(found.source)}`} has fingerprint ${found.box.fingerprint}`;
  else if (fingerprint || expected.sealed) problem = `${wants}; ${looked(config)}`;
  if (problem === null) {
    // Nothing expected and nothing found: a new database gets its development key as serve would make it (beside
    // HERALD_DB_PATH; docs/postgres.md tells PostgreSQL deployments to set HERALD_MASTER_KEY everywhere instead); a
    // read-only command makes none (it needs none) and records none.
    return need === "read-only" ? { secrets: refused(null, "no master key") } : {};
  }
  if (need === "needs-key") {
    throw new MasterKeyUnavailable(`${problem}. ${capitalised(remedy(config))}. Nothing was changed.`);
  }
  return {
    secrets: refused(fingerprint, problem, found?.box),
    note: `note: ${problem}. Listing only; to change the database, ${remedy(config)}.`,
  };
}

const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A key that seals and opens nothing: a read-only command never needs one, and none is recorded for it. */
function refused(expected: string | null, detail: string, box = new SecretBox(randomBytes(32))): SecretBox {
  box.refuse({ expected, detail });
  return box;
}
