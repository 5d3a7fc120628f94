import type { Statement } from "bun:sqlite";
import type { AppContext } from "../context";
import { sha256Hex } from "../client/sign";
import { AppError } from "../http/errors";
import { replayDetected, type NonceStore } from "./nonces";

/** A nonce that passed the guard and is recorded with the effect (see PartnerGuard.nonceInEffect). */
export interface DeferredNonce {
  keyId: string;
  nonce: string;
  recorded: boolean;
}

interface GroupedEffect {
  claim: IdempotencyClaim | null;
  nonce: DeferredNonce | null;
  effect: () => object;
  status: number;
  resolve: (value: object) => void;
  reject: (err: unknown) => void;
}

/** 1–255 visible ASCII characters (the IETF Idempotency-Key draft allows any string; we keep it printable). */
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyClaim {
  keyId: string;
  key: string;
  fingerprint: string;
}

interface Row {
  fingerprint: string;
  state: "in_progress" | "completed";
  response_status: number | null;
  response_body: string | null;
  locked_until: string | null;
  expires_at: string;
}

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
 * DESIGN.md §4. The effect and the stored response commit in ONE SQLite transaction, so "a response is stored"
 * and "the effect happened" are the same fact. Failed requests store nothing: a corrected retry may reuse the key.
 */
export class IdempotencyStore {
  private readonly select: Statement;
  private readonly upsertCompleted: Statement;
  private readonly claimInProgress: Statement;
  private readonly release: Statement;
  private readonly prune: Statement;
  private readonly savepoint: Statement;
  private readonly releaseSavepoint: Statement;
  private readonly rollbackToSavepoint: Statement;
  private group: GroupedEffect[] = [];
  private groupScheduled = false;
  /** Group commits made and the effects they carried (their ratio is the mean group size). */
  groupCommits = 0;
  groupedEffects = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly nonces: NonceStore | null = null,
  ) {
    const db = ctx.db.sqlite;
    this.savepoint = db.prepare("SAVEPOINT herald_effect");
    this.releaseSavepoint = db.prepare("RELEASE herald_effect");
    this.rollbackToSavepoint = db.prepare("ROLLBACK TO herald_effect");
    this.select = db.prepare(
      "SELECT fingerprint, state, response_status, response_body, locked_until, expires_at FROM idempotency_records WHERE key_id = ? AND idempotency_key = ?",
    );
    this.upsertCompleted = db.prepare(
      `INSERT INTO idempotency_records (key_id, idempotency_key, fingerprint, state, response_status, response_body, created_at, locked_until, expires_at)
       VALUES (?1, ?2, ?3, 'completed', ?4, ?5, ?6, NULL, ?7)
       ON CONFLICT (key_id, idempotency_key) DO UPDATE SET fingerprint = ?3, state = 'completed', response_status = ?4,
         response_body = ?5, created_at = ?6, locked_until = NULL, expires_at = ?7`,
    );
    this.claimInProgress = db.prepare(
      `INSERT INTO idempotency_records (key_id, idempotency_key, fingerprint, state, created_at, locked_until, expires_at)
       VALUES (?1, ?2, ?3, 'in_progress', ?4, ?5, ?6)
       ON CONFLICT (key_id, idempotency_key) DO UPDATE SET fingerprint = ?3, state = 'in_progress', response_status = NULL,
         response_body = NULL, created_at = ?4, locked_until = ?5, expires_at = ?6`,
    );
    this.release = db.prepare("DELETE FROM idempotency_records WHERE key_id = ? AND idempotency_key = ? AND state = 'in_progress'");
    this.prune = db.prepare("DELETE FROM idempotency_records WHERE expires_at <= ? AND (state = 'completed' OR locked_until <= ?)");
  }

  private expiry(now: Date): string {
    return new Date(now.getTime() + this.ctx.config.idempotencyTtlHours * 3_600_000).toISOString();
  }

  /** Throws the DESIGN.md §4 answer when the key was seen; returns when the request may run. */
  private check(claim: IdempotencyClaim, now: Date): void {
    const row = this.select.get(claim.keyId, claim.key) as Row | null;
    if (!row || Date.parse(row.expires_at) <= now.getTime()) return;
    if (row.fingerprint !== claim.fingerprint) {
      throw new AppError(
        "idempotency_key_reused",
        "This Idempotency-Key was used for a different request (method, path or body); use a new key for a new request",
      );
    }
    if (row.state === "completed") {
      throw new AppError("idempotency_replay", "A request with this Idempotency-Key already completed; this is its original response", {
        headers: { "idempotent-replayed": "true" },
        extra: { original_status: row.response_status, original_response: row.response_body ? JSON.parse(row.response_body) : null },
      });
    }
    const lockedMs = row.locked_until ? Date.parse(row.locked_until) - now.getTime() : 0;
    if (lockedMs > 0) {
      // Ask for a short wait: the lock is a crash bound, most first requests finish far sooner.
      const retry = Math.min(5, Math.max(1, Math.ceil(lockedMs / 1000)));
      throw new AppError("idempotency_in_progress", `The first request with this Idempotency-Key is still running; retry in ${retry} s with the same key`, {
        headers: { "retry-after": String(retry) },
      });
    }
  }

  /**
   * Runs a synchronous effect under the key: check, effect and stored response in one transaction. With no
   * claim (idempotency not required and no header), just runs the effect in a transaction.
   */
  run<T extends object>(claim: IdempotencyClaim | null, effect: () => T, status = 200): T {
    return this.ctx.db.sqlite.transaction(() => this.effectUnderKey(claim, effect, status)).immediate();
  }

  /** Inside the caller's transaction: the key check, the effect and the stored response. */
  private effectUnderKey<T extends object>(claim: IdempotencyClaim | null, effect: () => T, status: number): T {
    if (!claim) return effect();
    const now = this.ctx.clock.now();
    this.check(claim, now);
    const result = effect();
    this.upsertCompleted.run(claim.keyId, claim.key, claim.fingerprint, status, JSON.stringify(result), now.toISOString(), this.expiry(now));
    return result;
  }

  /**
   * `run`, with group commit: effects submitted in the same turn of the event loop commit together in ONE
   * transaction, each inside its own savepoint, so each stays atomic on its own (a failed effect rolls back to
   * its savepoint and fails alone) while the commit — most of a small write's cost — is shared. Nothing is
   * answered before the commit. A deferred nonce is recorded inside the effect's savepoint (a concurrent replay
   * in the same group then fails on it), and again outside it when the effect fails, so a refused request's
   * nonce stays used. The effect must be synchronous.
   */
  runGrouped<T extends object>(claim: IdempotencyClaim | null, effect: () => T, nonce: DeferredNonce | null = null, status = 200): Promise<T> {
    if (nonce && !this.nonces) throw new Error("IdempotencyStore.runGrouped: a deferred nonce needs the NonceStore");
    return new Promise<T>((resolve, reject) => {
      this.group.push({ claim, nonce, effect, status, resolve: resolve as (v: object) => void, reject });
      if (!this.groupScheduled) {
        this.groupScheduled = true;
        setImmediate(() => this.commitGroup());
      }
    });
  }

  private commitGroup(): void {
    this.groupScheduled = false;
    const group = this.group;
    this.group = [];
    const outcomes: Array<{ ok: true; value: object } | { ok: false; error: unknown }> = [];
    try {
      this.ctx.db.sqlite
        .transaction(() => {
          for (const g of group) outcomes.push(this.runInSavepoint(g));
        })
        .immediate();
    } catch (err) {
      for (const g of group) g.reject(err);
      return;
    }
    this.groupCommits++;
    this.groupedEffects += group.length;
    group.forEach((g, i) => {
      const o = outcomes[i]!;
      if (g.nonce) g.nonce.recorded = true;
      if (o.ok) g.resolve(o.value);
      else g.reject(o.error);
    });
  }

  private runInSavepoint(g: GroupedEffect): { ok: true; value: object } | { ok: false; error: unknown } {
    this.savepoint.run();
    try {
      if (g.nonce && !this.nonces!.use(g.nonce.keyId, g.nonce.nonce)) throw replayDetected();
      const value = this.effectUnderKey(g.claim, g.effect, g.status);
      this.releaseSavepoint.run();
      return { ok: true, value };
    } catch (error) {
      this.rollbackToSavepoint.run();
      this.releaseSavepoint.run();
      if (g.nonce) this.nonces!.use(g.nonce.keyId, g.nonce.nonce);
      return { ok: false, error };
    }
  }

  /**
   * For effects that must await (network I/O): claim the key as in progress (committed, so a concurrent
   * duplicate sees it), run, then store the response; on failure release the claim so a retry can run.
   * `commit` must be synchronous: it writes the effect's rows together with the stored response.
   */
  async runAsync<P, T extends object>(claim: IdempotencyClaim | null, prepare: () => Promise<P>, commit: (prepared: P) => T, status = 200): Promise<T> {
    const db = this.ctx.db.sqlite;
    if (!claim) {
      const prepared = await prepare();
      return db.transaction(() => commit(prepared)).immediate();
    }
    db.transaction(() => {
      const now = this.ctx.clock.now();
      this.check(claim, now);
      this.claimInProgress.run(
        claim.keyId,
        claim.key,
        claim.fingerprint,
        now.toISOString(),
        new Date(now.getTime() + IN_PROGRESS_LOCK_MS).toISOString(),
        this.expiry(now),
      );
    }).immediate();
    try {
      const prepared = await prepare();
      return db
        .transaction(() => {
          const result = commit(prepared);
          const now = this.ctx.clock.now();
          this.upsertCompleted.run(claim.keyId, claim.key, claim.fingerprint, status, JSON.stringify(result), now.toISOString(), this.expiry(now));
          return result;
        })
        .immediate();
    } catch (err) {
      this.release.run(claim.keyId, claim.key);
      throw err;
    }
  }

  pruneExpired(): number {
    const now = this.ctx.clock.now().toISOString();
    return this.prune.run(now, now).changes;
  }
}
