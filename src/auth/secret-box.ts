import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Config } from "../config";
import { AppError } from "../http/errors/errors";
import type { Logger } from "../log";

const VERSION = "v1";
const FINGERPRINT_LABEL = "herald/master-key/fingerprint/v1";

/** Why a master key must not be used: it cannot open the database's secrets (src/auth/master-key-check.ts). */
export interface MasterKeyMismatch {
  /** The fingerprint the database records, or null when it records none (a database from before key checks). */
  expected: string | null;
  /** For operators (logs, /readyz, the refusal to start): what was found, and what to do. */
  detail: string;
}

/** What a partner is told when a secret cannot be opened: the cause is the operators' to fix, not theirs. */
const PARTNER_MESSAGE =
  "This service cannot read its stored credentials (its master key does not match its database); the operators have been told. Retrying does not help until they fix it.";

/**
 * AES-256-GCM for secrets at rest (partner and webhook secrets). Format: `v1.<iv>.<tag>.<ciphertext>` in
 * base64url; a fresh 96-bit IV per secret. The auth tag makes a tampered or wrong-key ciphertext fail loudly:
 * as 503 `master_key_mismatch`, never as a 500.
 */
export class SecretBox {
  private readonly key: Buffer;
  /** A short public name of the key: 16 hex characters of HMAC-SHA256(key, a fixed label); reveals nothing of it. */
  readonly fingerprint: string;
  private refusal: MasterKeyMismatch | null = null;
  constructor(key: Uint8Array) {
    if (key.byteLength !== 32) throw new Error("master key must be 32 bytes");
    this.key = Buffer.from(key);
    this.fingerprint = this.derive(FINGERPRINT_LABEL).subarray(0, 8).toString("hex");
  }

  /** Set once at start when this key cannot open the database's secrets: nothing is sealed or opened under it. */
  refuse(mismatch: MasterKeyMismatch): void {
    this.refusal = mismatch;
  }

  /** The mismatch found at start, or null when the key opens the database's secrets. */
  get mismatch(): MasterKeyMismatch | null {
    return this.refusal;
  }

  private mismatchError(internal: string, cause?: unknown): AppError {
    return new AppError("master_key_mismatch", PARTNER_MESSAGE, { internal, cause });
  }

  seal(plaintext: string, aad = ""): string {
    // A secret sealed under the wrong key would be unreadable once the right key is back: refuse instead.
    if (this.refusal) throw this.mismatchError(this.refusal.detail);
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ct.toString("base64url")].join(".");
  }

  /** A subkey for another purpose (HMAC-SHA256 over a fixed label): one master key, never two uses of it. */
  derive(label: string): Buffer {
    return createHmac("sha256", this.key).update(label).digest();
  }

  open(sealed: string, aad = ""): string {
    const [version, iv, tag, ct] = sealed.split(".");
    if (version !== VERSION || !iv || !tag || ct === undefined) throw new Error("unrecognised ciphertext format");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    try {
      return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
    } catch (err) {
      // The tag did not verify: another key sealed it (a database restored without its key), or it was altered.
      throw this.mismatchError(this.refusal?.detail ?? `master key ${this.fingerprint} cannot open a stored secret (${(err as Error).message})`, err);
    }
  }
}

export function decodeMasterKey(text: string): Buffer {
  const t = text.trim();
  return /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64");
}

/** Where a development master key lives: `master.key` beside the SQLite file (null for an in-memory database). */
export function devKeyFile(config: Config): string | null {
  return config.dbPath === ":memory:" ? null : join(dirname(config.dbPath), "master.key");
}

/** A master key found where Herald looks for one, and where it was found (for what an operator is told). */
export interface FoundKey {
  box: SecretBox;
  /** `HERALD_MASTER_KEY`, or the development key file's path. */
  source: string;
}

/**
 * The master key, if there is one, without making one: HERALD_MASTER_KEY when set, else the development key file
 * beside the SQLite file when it exists. Writes nothing (the CLI's commands look before they decide to generate).
 */
export function findMasterKey(config: Config): FoundKey | null {
  if (config.masterKey) return { box: new SecretBox(decodeMasterKey(config.masterKey)), source: "HERALD_MASTER_KEY" };
  const file = devKeyFile(config);
  if (!file || !existsSync(file)) return null;
  return { box: new SecretBox(decodeMasterKey(readFileSync(file, "utf8"))), source: file };
}

/**
 * HERALD_MASTER_KEY when set (required in production, enforced by config). Elsewhere a key is generated once
 * into `<db dir>/master.key` with mode 0600 — convenient for development, and loudly warned about.
 */
export function resolveMasterKey(config: Config, log: Logger): SecretBox {
  const found = findMasterKey(config);
  if (found) return found.box;
  const file = devKeyFile(config);
  if (!file) return new SecretBox(randomBytes(32));
  // On SQLite the folder exists (the database file was opened in it first); on PostgreSQL nothing has made it.
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
  chmodSync(file, 0o600);
  log.warn("HERALD_MASTER_KEY is not set: generated a development master key; set HERALD_MASTER_KEY in production", { file });
  return new SecretBox(decodeMasterKey(readFileSync(file, "utf8")));
}
