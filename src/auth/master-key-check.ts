import type { Database } from "bun:sqlite";
import { timingSafeEqual } from "node:crypto";
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

const missingTable = (err: unknown) => /no such table/i.test((err as Error).message);

/** The row the database keeps, or null (none yet, or a database older than the table: a backup being restored). */
export function recordedKey(sqlite: Database): RecordedKey | null {
  try {
    return (sqlite.query("SELECT fingerprint, check_value FROM master_key_check WHERE id = 1").get() as RecordedKey | null) ?? null;
  } catch (err) {
    if (missingTable(err)) return null;
    throw err;
  }
}

/**
 * One stored secret of each kind, with the AAD it was sealed with: partner keys (AAD the key id,
 * src/auth/keys.ts), webhooks (`webhook:<id>`, src/webhooks/secrets.ts) and status subscribers
 * (`status-subscriber:<id>`, src/status/incidents/subscribers.ts). test/auth/master-key.test.ts seals one of each through
 * those modules and checks they open here, so a changed AAD cannot go unnoticed.
 */
// Only ciphertexts in SecretBox's format say anything about the key (an empty or malformed one is another problem).
const SEALED = "secret_ciphertext LIKE 'v1.%'";

function sampleSecrets(sqlite: Database): Array<{ what: string; ciphertext: string; aad: string }> {
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
    try {
      const row = sqlite.query(p.sql).get() as { id: string | number; c: string } | null;
      if (row) out.push({ what: p.what, ciphertext: row.c, aad: p.aad(String(row.id)) });
    } catch (err) {
      if (!missingTable(err)) throw err; // an older backup may predate a table
    }
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
export function judgeKey(sqlite: Database, box: SecretBox): KeyVerdict {
  const recorded = recordedKey(sqlite);
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
  const samples = sampleSecrets(sqlite);
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

/** What to do about a key that does not open the database: said by the start refusal, /readyz and the logs. */
export const MASTER_KEY_ADVICE =
  "start Herald with the HERALD_MASTER_KEY this database was made with (docs/operations.md, section Restore: the database and its master key)";

/**
 * At every start (src/bootstrap.ts): judge the key; when it opens the secrets and nothing is recorded yet,
 * record it (first start, or the first start of a database from before key checks); when it does not, mark the
 * SecretBox refused, so that nothing is sealed under it and every secret it cannot open is a 503, and say so.
 */
export function verifyMasterKey(sqlite: Database, box: SecretBox, nowIso: string, log: Logger): KeyVerdict {
  let verdict = judgeKey(sqlite, box);
  if (verdict.opens && verdict.by !== "check_value") {
    sqlite
      .query("INSERT INTO master_key_check (id, fingerprint, check_value, created_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO NOTHING")
      .run(box.fingerprint, checkValueOf(box), nowIso);
    // Judged again from the row: another instance starting at the same moment may have recorded its key first.
    verdict = judgeKey(sqlite, box);
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
