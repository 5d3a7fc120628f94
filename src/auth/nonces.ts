import type { AppContext } from "../context";
import type { BatchedDeleteResult } from "../db/batched-delete";
import type { Queryable } from "../db/port";
import { AppError } from "../http/errors/errors";
import { pruneNonces, useNonce } from "./store/nonces";

export const NONCE_FORMAT = /^[0-9a-fA-F]{16,128}$/;

export function isValidNonce(nonce: string): boolean {
  return NONCE_FORMAT.test(nonce);
}

/** The answer to a nonce used before, wherever it is found (the guard, or a grouped effect's transaction). */
export const replayDetected = () => new AppError("replay_detected", "This X-Partner-Nonce was already used; sign the retry with a new nonce");

/**
 * Single-use nonces per key, kept for 2× the skew window and one second: any request still inside the timestamp
 * window finds its nonce here. The second is the timestamp check's: it compares whole seconds (floor of the clock), so
 * a request signed `skew` s ahead and first used at T still passes until floor(T) + 2·skew + 1 s, up to a second past
 * T + 2·skew. The primary key makes "use" atomic — two concurrent requests with one nonce cannot
 * both insert, whichever instance they run on.
 */
export class NonceStore {
  constructor(private readonly ctx: AppContext) {}

  /** Records the nonce (in `q`, a transaction, when given); false when it was already used inside its window (a replay). */
  use(keyId: string, nonce: string, q: Queryable = this.ctx.store): Promise<boolean> {
    const now = this.ctx.clock.now();
    const expires = new Date(now.getTime() + (2 * this.ctx.config.signatureSkewSeconds + 1) * 1000).toISOString();
    return useNonce(q, keyId, nonce.toLowerCase(), expires, now.toISOString());
  }

  pruneExpired(): Promise<BatchedDeleteResult> {
    return pruneNonces(this.ctx.store, this.ctx.clock.now().toISOString());
  }
}
