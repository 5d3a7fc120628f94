import type { AppContext } from "../context";
import { sha256Hex } from "../client/sign";
import type { BatchedDeleteResult } from "../db/batched-delete";
import { type Queryable, StoreUnavailable, type TxOptions, type TxScope, withBehind } from "../db/port";
import { lastStatements } from "../db/in-order";
import { retryWhileHeld } from "../db/row-held";
import { AppError } from "../http/errors/errors";
import { replayDetected, type NonceStore } from "./nonces";
import * as store from "./store/idempotency";

/** A nonce that passed the guard and is recorded with the effect (see PartnerGuard.nonceInEffect). */
export interface DeferredNonce {
  keyId: string;
  nonce: string;
  recorded: boolean;
}

/** 1–255 visible ASCII characters (the IETF Idempotency-Key draft allows any string; we keep it printable). */
export const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

export type IdempotencyClaim = Pick<store.ClaimRow, "keyId" | "key" | "fingerprint">;

export function isValidIdempotencyKey(key: string): boolean {
  return KEY_FORMAT.test(key);
}

/** What makes two requests "the same": method, target and the exact body bytes. */
export function requestFingerprint(method: string, target: string, rawBody: Uint8Array | null): string {
  return Bun.SHA256.hash(`${method.toUpperCase()}\n${target}\n${sha256Hex(rawBody)}`, "hex");
}

/** A lock on an in-progress async request; after it lapses (a crashed process) another attempt may take over. */
const IN_PROGRESS_LOCK_MS = 60_000;

/**
 * A stored answer is sealed at rest (AES-256-GCM under the master key, bound to its partner key and Idempotency-Key):
 * some carry a secret shown once (a webhook's, at create and rotate), and a stored answer is in every backup and
 * replica for IDEMPOTENCY_TTL_HOURS. Sealing a 189-byte credit answer took 3.3–4.8 µs here (100,000 in a loop), about
 * 2 % of a credit.
 */
const sealedFor = (claim: Pick<IdempotencyClaim, "keyId" | "key">) => `idempotency\n${claim.keyId}\n${claim.key}`;

/** The docs/design.md §4 answer for a key whose row binds it (another request has it, or had it). */
function answerFor(ctx: AppContext, row: store.IdempotencyRow, claim: IdempotencyClaim, nowMs: number): AppError {
  if (row.fingerprint !== claim.fingerprint) {
    return new AppError(
      "idempotency_key_reused",
      "This Idempotency-Key was used for a different request (method, path or body); use a new key for a new request",
    );
  }
  if (row.state === "completed") {
    return new AppError("idempotency_replay", "A request with this Idempotency-Key already completed; this is its original response", {
      headers: { "idempotent-replayed": "true" },
      extra: { original_status: row.response_status, original_response: row.response_body ? JSON.parse(openAnswer(ctx, row.response_body, claim)) : null },
    });
  }
  const lockedMs = row.locked_until ? Date.parse(row.locked_until) - nowMs : 0;
  // Ask for a short wait: the lock is a crash bound, most first requests finish far sooner.
  const retry = Math.min(5, Math.max(1, Math.ceil(lockedMs / 1000)));
  return new AppError("idempotency_in_progress", `The first request with this Idempotency-Key is still running; retry in ${retry} s with the same key`, {
    headers: { "retry-after": String(retry) },
  });
}

/** A stored answer, opened; one stored before answers were sealed (plain JSON, an object) is read as it is. */
const openAnswer = (ctx: AppContext, body: string, claim: IdempotencyClaim) => (body.startsWith("{") ? body : ctx.secrets.open(body, sealedFor(claim)));

/**
 * docs/design.md §4 over the storage port. The key is claimed FIRST, in the effect's own transaction: an INSERT … ON
 * CONFLICT DO NOTHING only one of two concurrent requests can win (on PostgreSQL the second waits, then answers from
 * the row). The effect and the stored response commit together, so "a response is stored" and "the effect happened"
 * are one fact; a failed request stores nothing and a corrected retry may reuse the key.
 */
export class IdempotencyStore {
  constructor(
    private readonly ctx: AppContext,
    private readonly nonces: NonceStore | null = null,
  ) {}

  private expiry(nowMs: number): string {
    return new Date(nowMs + this.ctx.config.idempotencyTtlHours * 3_600_000).toISOString();
  }

  /** Claims the key inside `t`, or throws the answer its row gives. `lockedUntil`: null while the claim lives only in `t`. */
  private async claimIn(t: Queryable, claim: IdempotencyClaim, now: Date, lockedUntil: string | null): Promise<void> {
    const c: store.ClaimRow = { ...claim, nowIso: now.toISOString(), lockedUntil, expiresAt: this.expiry(now.getTime()) };
    if (await store.insertClaim(t, c)) return;
    const row = await store.recordOf(t, claim.keyId, claim.key);
    // Gone meanwhile (its claim was released): the key is free again.
    if (!row) {
      if (await store.insertClaim(t, c)) return;
      throw new AppError("idempotency_in_progress", "The first request with this Idempotency-Key is still running; retry in 1 s with the same key", {
        headers: { "retry-after": "1" },
      });
    }
    const expired = Date.parse(row.expires_at) <= now.getTime();
    const lapsed = row.state === "in_progress" && row.locked_until !== null && Date.parse(row.locked_until) <= now.getTime();
    if ((expired || (lapsed && row.fingerprint === claim.fingerprint)) && (await store.takeOverClaim(t, c))) return;
    throw answerFor(this.ctx, row, claim, now.getTime());
  }

  private complete(t: Queryable, claim: IdempotencyClaim, status: number, result: object): Promise<void> {
    return store.completeClaim(t, { keyId: claim.keyId, key: claim.key, status, body: this.ctx.secrets.seal(JSON.stringify(result), sealedFor(claim)) });
  }

  /**
   * Runs the effect under the key in ONE transaction: the deferred nonce (so a concurrent replay fails on it), the
   * claim, the effect (awaiting only its handle) and the stored response; with no claim, still in a transaction. When
   * the effect fails, its nonce is recorded on its own, so a refused request cannot be replayed either.
   *
   * Round trips (PostgreSQL): the nonce, the claim and the effect's first statements are sent together; the checks'
   * answers decide first (a replay or a reused key is answered as such, the effect's writes rolled back). Statements
   * the effect leaves in flight (`t.behind(…)`: its outbox event) ride with the stored response and the COMMIT
   * (TxOptions.lastAnsweredWithCommit). The commit may be shared with others arriving together (group commit).
   */
  async run<T extends object>(
    claim: IdempotencyClaim | null,
    effect: (t: TxScope) => T | Promise<T>,
    status = 200,
    nonce: DeferredNonce | null = null,
    /** The contended row the effect changes (TxOptions.group), for a commit shared with others (none: alone), and
     * whether the effect may run at once with the others of its batch (TxOptions.together). */
    sharing: Pick<TxOptions, "group" | "together"> = {},
  ): Promise<T> {
    if (nonce && !this.nonces) throw new Error("IdempotencyStore.run: a deferred nonce needs the NonceStore");
    try {
      const result = await this.ctx.store.tx(
        async (t): Promise<T> => {
          const checks: Array<Promise<unknown>> = [];
          if (nonce) checks.push(this.nonces!.use(nonce.keyId, nonce.nonce, t).then((fresh) => fresh || Promise.reject(replayDetected())));
          if (claim) checks.push(this.claimIn(t, claim, this.ctx.clock.now(), null));
          const tail: Array<Promise<unknown>> = [];
          const effected = (async () => effect(withBehind(t, (work) => void tail.push(work))))();
          // The checks decide first, in their order: a replay is answered as one even if the effect would fail now.
          const settled = await Promise.allSettled([...checks, effected]);
          const failed = settled.find((r) => r.status === "rejected");
          if (failed) {
            await Promise.allSettled(tail);
            throw failed.reason;
          }
          const value = (settled[settled.length - 1] as PromiseFulfilledResult<T>).value;
          await lastStatements(t, Promise.all([claim ? this.complete(t, claim, status, value) : null, ...tail]));
          return value;
        },
        {
          ...(sharing.group === undefined ? {} : { group: sharing.group, together: sharing.together === true }),
          lastAnsweredWithCommit: true,
        },
      );
      if (nonce) nonce.recorded = true;
      return result;
    } catch (err) {
      // Not while the database is away: that write would fail too (the request is answered 503, with no effect).
      if (nonce && !nonce.recorded && !(err instanceof StoreUnavailable)) {
        nonce.recorded = true;
        // Taken meanwhile: a replay ran while this transaction (its nonce insert with it) was rolled back. Exactly
        // one of the two is the replay, so this one is answered as one, whatever its own refusal was.
        if (!(await this.nonces!.use(nonce.keyId, nonce.nonce))) throw replayDetected();
      }
      throw err;
    }
  }

  /**
   * For effects that must await network I/O, which no transaction may wait for: claim the key as in progress
   * (committed, its lock lapsing after IN_PROGRESS_LOCK_MS if this process dies), prepare, then commit the effect's
   * rows with the stored response; on failure release the claim so a retry can run. A commit that finds a row held
   * elsewhere may throw RowHeldElsewhere and run again after a pause (src/db/row-held.ts; `lastRun`: wait for it).
   */
  async runAsync<P, T extends object>(
    claim: IdempotencyClaim | null,
    prepare: () => Promise<P>,
    commit: (prepared: P, t: Queryable, lastRun: boolean) => T | Promise<T>,
    status = 200,
  ): Promise<T> {
    if (!claim) {
      const prepared = await prepare();
      return retryWhileHeld((lastRun) => this.ctx.store.tx(async (t) => commit(prepared, t, lastRun)));
    }
    const now = this.ctx.clock.now();
    await this.ctx.store.tx((t) => this.claimIn(t, claim, now, new Date(now.getTime() + IN_PROGRESS_LOCK_MS).toISOString()));
    try {
      const prepared = await prepare();
      return await retryWhileHeld((lastRun) =>
        this.ctx.store.tx(async (t) => {
          const result = await commit(prepared, t, lastRun);
          await this.complete(t, claim, status, result);
          return result;
        }),
      );
    } catch (err) {
      await store.releaseClaim(this.ctx.store, claim.keyId, claim.key);
      throw err;
    }
  }

  pruneExpired(): Promise<BatchedDeleteResult> {
    return store.pruneIdempotency(this.ctx.store, this.ctx.clock.now().toISOString());
  }
}
