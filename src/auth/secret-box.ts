import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Config } from "../config";
import type { Logger } from "../log";

const VERSION = "v1";

/**
 * AES-256-GCM for secrets at rest (partner and webhook secrets). Format: `v1.<iv>.<tag>.<ciphertext>` in
 * base64url; a fresh 96-bit IV per secret. The auth tag makes a tampered or wrong-key ciphertext fail loudly.
 */
export class SecretBox {
  private readonly key: Buffer;
  constructor(key: Uint8Array) {
    if (key.byteLength !== 32) throw new Error("master key must be 32 bytes");
    this.key = Buffer.from(key);
  }

  seal(plaintext: string, aad = ""): string {
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
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  }
}

export function decodeMasterKey(text: string): Buffer {
  const t = text.trim();
  return /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64");
}

/**
 * HERALD_MASTER_KEY when set (required in production, enforced by config). Elsewhere a key is generated once
 * into `<db dir>/master.key` with mode 0600 — convenient for development, and loudly warned about.
 */
export function resolveMasterKey(config: Config, log: Logger): SecretBox {
  if (config.masterKey) return new SecretBox(decodeMasterKey(config.masterKey));
  const dir = config.dbPath === ":memory:" ? null : dirname(config.dbPath);
  if (!dir) return new SecretBox(randomBytes(32));
  const file = join(dir, "master.key");
  if (!existsSync(file)) {
    writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
    chmodSync(file, 0o600);
    log.warn("HERALD_MASTER_KEY is not set: generated a development master key; set HERALD_MASTER_KEY in production", { file });
  }
  return new SecretBox(decodeMasterKey(readFileSync(file, "utf8")));
}
