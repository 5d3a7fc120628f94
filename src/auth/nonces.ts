import type { Statement } from "bun:sqlite";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";

const NONCE_FORMAT = /^[0-9a-fA-F]{16,128}$/;

export function isValidNonce(nonce: string): boolean {
  return NONCE_FORMAT.test(nonce);
}

/** The answer to a nonce used before, wherever it is found (the guard, or a grouped effect's savepoint). */
export const replayDetected = () => new AppError("replay_detected", "This X-Partner-Nonce was already used; sign the retry with a new nonce");

/**
 * Single-use nonces per key, kept for 2× the skew window: any request still inside the timestamp window
 * finds its nonce here. The primary key makes "use" atomic — two concurrent requests with one nonce cannot
 * both insert, whichever process they run in.
 */
export class NonceStore {
  private readonly insert: Statement;
  private readonly live: Statement;
  private readonly prune: Statement;

  constructor(private readonly ctx: AppContext) {
    // An expired row with the same nonce may be reused (its request can no longer pass the timestamp check).
    this.insert = ctx.db.sqlite.prepare(
      `INSERT INTO partner_nonces (key_id, nonce, expires_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = excluded.expires_at WHERE partner_nonces.expires_at <= ?4`,
    );
    this.live = ctx.db.sqlite.prepare("SELECT 1 FROM partner_nonces WHERE key_id = ? AND nonce = ? AND expires_at > ?");
    this.prune = ctx.db.sqlite.prepare("DELETE FROM partner_nonces WHERE expires_at <= ?");
  }

  /** True when the nonce was already used inside its window (a read: `use` is what records it). */
  used(keyId: string, nonce: string): boolean {
    return this.live.get(keyId, nonce.toLowerCase(), this.ctx.clock.now().toISOString()) !== null;
  }

  /** Records the nonce; false when it was already used inside its window (a replay). */
  use(keyId: string, nonce: string): boolean {
    const now = this.ctx.clock.now();
    const expires = new Date(now.getTime() + 2 * this.ctx.config.signatureSkewSeconds * 1000).toISOString();
    const { changes } = this.insert.run(keyId, nonce.toLowerCase(), expires, now.toISOString());
    return changes === 1;
  }

  pruneExpired(): number {
    return this.prune.run(this.ctx.clock.now().toISOString()).changes;
  }
}
