import { timingSafeEqual } from "node:crypto";
import type { Param, Queryable } from "../db/port";
import type { SyncQueryable } from "../db/sqlite-file";
import type { Logger } from "../log";
import type { SecretBox } from "./secret-box";

// Which master key a database was made with. Secrets at rest are AES-256-GCM under HERALD_MASTER_KEY; a database
// restored without its key (or a server started with another key) used to look healthy and fail every partner
// call. So the database keeps a key check value — HMAC-SHA256(master key, a fixed label), in the one row of
// master_key_check — and the key's short public fingerprint, and every start compares the key it has.
//
// A database from before this check has no row: its key is judged by opening one stored secret of each kind, and
// when they open (or there are none) the row is written then. Neither value reveals anything about the key.

const CHECK_LABEL = "herald/master-key/check/v1";

/** The key check value of a master key: 64 hex characters. */
export const checkValueOf = (box: SecretBox): string => box.derive(CHECK_LABEL).toString("hex");

export interface RecordedKey {
  fingerprint: string;
  check_value: string;
}

// The check is written once, as steps (a generator that yields each statement it needs and receives its row), and
// run by two drivers: synchronously on a bun:sqlite connection (a SQLite start, which is synchronous, and a backup
// file being restored) and through the storage port (PostgreSQL). A statement on a table the database does not
// have yet (an old backup) answers null.
type Step = { sql: string; params: Param[]; write?: true };
type Steps<T> = Generator<Step, T, Record<string, unknown> | null>;

const missingTable = (err: unknown) => /no such table|does not exist/i.test((err as Error).message);

function runOnSqlite<T>(sqlite: SyncQueryable, steps: Steps<T>): T {
  let next = steps.next();
  while (!next.done) {
    const { sql, params, write } = next.value;
    let row: Record<string, unknown> | null = null;
    try {
      if (write) sqlite.run(sql, params);
      else row = sqlite.get(sql, params);
    } catch (err) {
      if (!missingTable(err)) throw err;
    }
    next = steps.next(row);
  }
  return next.value;
}

async function runOnStore<T>(q: Queryable, steps: Steps<T>): Promise<T> {
  let next = steps.next();
  while (!next.done) {
    const { sql, params, write } = next.value;
    let row: Record<string, unknown> | null = null;
    try {
      if (write) await q.run(sql, params);
      else row = await q.get(sql, params);
    } catch (err) {
      // A read of a table the database does not have yet (a CLI command looking before it migrates) answers null.
      if (write || !missingTable(err)) throw err;
    }
    next = steps.next(row);
  }
  return next.value;
}

function* recordedKeySteps(): Steps<RecordedKey | null> {
  return ((yield { sql: "SELECT fingerprint, check_value FROM master_key_check WHERE id = 1", params: [] }) as RecordedKey | null) ?? null;
}

/** The row the database keeps, or null (none yet, or a database older than the table: a backup being restored). */
export const recordedKey = (sqlite: SyncQueryable): RecordedKey | null => runOnSqlite(sqlite, recordedKeySteps());

/**
 * One stored secret of each kind, with the AAD it was sealed with: partner keys (AAD the key id,
 * src/auth/keys.ts), webhooks (`webhook:<id>`, src/webhooks/secrets.ts) and status subscribers
 * (`status-subscriber:<id>`, src/status/incidents/subscribers.ts). test/auth/master-key.test.ts seals one of each through
 * those modules and checks they open here, so a changed AAD cannot go unnoticed.
 */
// Only ciphertexts in SecretBox's format say anything about the key (an empty or malformed one is another problem).
const SEALED = "secret_ciphertext LIKE 'v1.%'";

function* sampleSecrets(): Steps<Array<{ what: string; ciphertext: string; aad: string }>> {
  const probes = [
    {
      what: "a partner key secret",
      sql: `SELECT key_id AS id, secret_ciphertext AS c FROM partner_keys WHERE ${SEALED} ORDER BY key_id LIMIT 1`,
      aad: (id: string) => id,
    },
    {
      what: "a webhook secret",
      sql: `SELECT id, secret_ciphertext AS c FROM webhooks WHERE ${SEALED} ORDER BY id LIMIT 1`,
      aad: (id: string) => `webhook:${id}`,
    },
    {
      what: "a status subscriber secret",
      sql: `SELECT id, secret_ciphertext AS c FROM status_subscribers WHERE ${SEALED} ORDER BY id LIMIT 1`,
      aad: (id: string) => `status-subscriber:${id}`,
    },
  ];
  const out: Array<{ what: string; ciphertext: string; aad: string }> = [];
  for (const p of probes) {
    // An older backup may predate a table: the driver answers null for it.
    const row = (yield { sql: p.sql, params: [] }) as { id: string | number; c: string } | null;
    if (row) out.push({ what: p.what, ciphertext: row.c, aad: p.aad(String(row.id)) });
  }
  return out;
}

export type KeyVerdict =
  /** The recorded check value matches. */
  | { opens: true; by: "check_value" }
  /** Nothing recorded; every sampled secret opened (or there are none). */
  | { opens: true; by: "secrets" | "empty" }
  | { opens: false; expected: string | null; detail: string };

/** Whether `box` is the key the database was made with. Reads only. */
export const judgeKey = (sqlite: SyncQueryable, box: SecretBox): KeyVerdict => runOnSqlite(sqlite, judgeSteps(box));

function* judgeSteps(box: SecretBox): Steps<KeyVerdict> {
  const recorded = yield* recordedKeySteps();
  if (recorded) {
    const mine = Buffer.from(checkValueOf(box));
    const theirs = Buffer.from(recorded.check_value);
    if (mine.length === theirs.length && timingSafeEqual(mine, theirs)) return { opens: true, by: "check_value" };
    return {
      opens: false,
      expected: recorded.fingerprint,
      detail: `the master key in use (fingerprint ${box.fingerprint}) is not the one this database was made with (fingerprint ${recorded.fingerprint})`,
    };
  }
  const samples = yield* sampleSecrets();
  for (const s of samples) {
    try {
      box.open(s.ciphertext, s.aad);
    } catch {
      return {
        opens: false,
        expected: null,
        detail: `the master key in use (fingerprint ${box.fingerprint}) cannot open ${s.what} stored in this database, which records no key fingerprint (it predates key checks)`,
      };
    }
  }
  return { opens: true, by: samples.length ? "secrets" : "empty" };
}

/** Whether the database expects a particular master key: the one it records, or (before key checks) a sealed secret. */
export interface ExpectedKey {
  recorded: RecordedKey | null;
  /** What kind of sealed secret it holds when it records no key ("a partner key secret"), or null. */
  sealed: string | null;
}

function* expectedKeySteps(): Steps<ExpectedKey> {
  const recorded = yield* recordedKeySteps();
  if (recorded) return { recorded, sealed: null };
  const samples = yield* sampleSecrets();
  return { recorded: null, sealed: samples[0]?.what ?? null };
}

/** Which key the database expects, if any. Reads only; a database without Herald's tables expects none. */
export const expectedKey = (sqlite: SyncQueryable): ExpectedKey => runOnSqlite(sqlite, expectedKeySteps());
export const expectedKeyOnStore = (q: Queryable): Promise<ExpectedKey> => runOnStore(q, expectedKeySteps());
/** judgeKey through the storage port. Reads only. */
export const judgeKeyOnStore = (q: Queryable, box: SecretBox): Promise<KeyVerdict> => runOnStore(q, judgeSteps(box));

/** What to do about a key that does not open the database: said by the start refusal, /readyz and the logs. */
export const MASTER_KEY_ADVICE =
  "start Herald with the HERALD_MASTER_KEY this database was made with (docs/operations.md, section Restore: the database and its master key)";

/**
 * At every start (src/bootstrap.ts): judge the key; when it opens the secrets and nothing is recorded yet,
 * record it (first start, or the first start of a database from before key checks); when it does not, mark the
 * SecretBox refused, so that nothing is sealed under it and every secret it cannot open is a 503, and say so.
 */
export const verifyMasterKey = (sqlite: SyncQueryable, box: SecretBox, nowIso: string, log: Logger): KeyVerdict =>
  runOnSqlite(sqlite, verifySteps(box, nowIso, log));

/** verifyMasterKey through the storage port (PostgreSQL: several instances may start at once; the row is written once). */
export const verifyMasterKeyOnStore = (q: Queryable, box: SecretBox, nowIso: string, log: Logger): Promise<KeyVerdict> =>
  runOnStore(q, verifySteps(box, nowIso, log));

function* verifySteps(box: SecretBox, nowIso: string, log: Logger): Steps<KeyVerdict> {
  let verdict = yield* judgeSteps(box);
  if (verdict.opens && verdict.by !== "check_value") {
    yield {
      sql: "INSERT INTO master_key_check (id, fingerprint, check_value, created_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
      params: [box.fingerprint, checkValueOf(box), nowIso],
      write: true,
    };
    // Judged again from the row: another instance starting at the same moment may have recorded its key first.
    verdict = yield* judgeSteps(box);
    if (verdict.opens) log.info("recorded the master key's check value", { fingerprint: box.fingerprint });
  }
  if (!verdict.opens) {
    box.refuse({ expected: verdict.expected, detail: `${verdict.detail}; ${MASTER_KEY_ADVICE}` });
    log.error("master key mismatch: partner and webhook secrets cannot be decrypted", {
      fingerprint: box.fingerprint,
      expected_fingerprint: verdict.expected,
      detail: verdict.detail,
    });
  }
  return verdict;
}
