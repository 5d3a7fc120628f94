import { createHash } from "node:crypto";
import type { AppContext } from "../context";
import { UniqueViolation } from "../db/port";
import type { Actor } from "./actors";
import { recordAudit } from "./audit";
import * as store from "./store/tokens";
import { revokeSessionsOfToken } from "./store/sessions";
import { found, ValidationError } from "../http/errors/errors";

/**
 * `Authorization: Bearer <token>` (admin tokens, audio-share track tokens): the scheme in any case (RFC 9110 §11.1),
 * one or more spaces, then 16–512 visible ASCII characters.
 */
export const BEARER = /^bearer +([\x21-\x7e]{16,512})$/i;

export const sha256Hex = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");

/** An admin token as `herald admin-token list` shows it: never the token, never its hash. */
export type AdminTokenView = store.TokenView;

/**
 * Operator tokens: random, shown once, stored as SHA-256 hashes. A lookup by hash is already constant-time
 * with respect to the secret (an attacker cannot steer the hash), so no secret is ever compared byte by byte.
 */
export class AdminTokens {
  constructor(private readonly ctx: AppContext) {}

  async verify(token: string): Promise<Extract<Actor, { kind: "admin" }> | null> {
    const row = await store.activeTokenByHash(this.ctx.store, sha256Hex(token));
    if (!row) return null;
    const now = this.ctx.clock.now().toISOString();
    if (!row.last_used_at || Date.parse(now) - Date.parse(row.last_used_at) >= 60_000) await store.touchToken(this.ctx.store, row.id, now);
    return { kind: "admin", tokenId: row.id, name: row.name };
  }

  async create(name: string, actor: Actor, requestId: string | null = null): Promise<{ id: number; name: string; token: string }> {
    if (!/^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/.test(name)) {
      throw new ValidationError("Invalid token name", [{ field: "name", problem: "must be 1–64 letters, digits, spaces or . _ @ -" }]);
    }
    const token = "hat_" + Buffer.from(this.ctx.rng.bytes(32)).toString("base64url");
    return { ...(await this.insert(name, token, actor, requestId)), token };
  }

  /**
   * ADMIN_TOKEN from the environment: registered once (idempotent on its hash), never printed. A revoked one
   * stays revoked: an operator who revoked it but left the variable set must not get it back at the next start.
   * Instances started together with one ADMIN_TOKEN all find it missing, and all but one then meet the hash's unique
   * index (the table's only unique key but its generated id): the one that committed registered it for them (before,
   * the others exited at start with that violation).
   */
  async ensureBootstrap(token: string): Promise<void> {
    if (await store.tokenHashExists(this.ctx.store, sha256Hex(token))) return;
    try {
      await this.insert("env:ADMIN_TOKEN", token, { kind: "cli", user: "bootstrap" }, null);
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
    }
  }

  /** Every token, oldest first, revoked ones included (they stay listed: who had access, and until when). */
  list(): Promise<AdminTokenView[]> {
    return store.listTokens(this.ctx.store);
  }

  /**
   * Revokes a token at once: verify() and the operator sessions opened with it check revoked_at on every request
   * (no cache), so its bearer calls are refused and its browser sessions end from the next request on. Its open
   * sessions are also marked revoked, so GET /admin/sessions shows them ended.
   */
  async revoke(id: number, actor: Actor, requestId: string | null = null): Promise<{ token: AdminTokenView; sessionsEnded: number; alreadyRevoked: boolean }> {
    const now = this.ctx.clock.now().toISOString();
    return this.ctx.store.tx(async (t) => {
      const before = found(await store.tokenById(t, id), "Admin token", id);
      if (!(await store.revokeToken(t, id, now))) return { token: before, sessionsEnded: 0, alreadyRevoked: true };
      const sessionsEnded = await revokeSessionsOfToken(t, id, now);
      await recordAudit(t, {
        at: now,
        actor,
        action: "admin_token.revoke",
        target: String(id),
        details: { name: before.name, sessions_ended: sessionsEnded },
        requestId,
      });
      return { token: (await store.tokenById(t, id))!, sessionsEnded, alreadyRevoked: false };
    });
  }

  count(): Promise<number> {
    return store.countTokens(this.ctx.store);
  }

  /** Tokens not revoked: 0 means nobody can reach /admin or the console. */
  activeCount(): Promise<number> {
    return store.countActiveTokens(this.ctx.store);
  }

  private async insert(name: string, token: string, actor: Actor, requestId: string | null): Promise<{ id: number; name: string }> {
    const now = this.ctx.clock.now().toISOString();
    return this.ctx.store.tx(async (t) => {
      const id = await store.insertToken(t, name, sha256Hex(token), now);
      await recordAudit(t, { at: now, actor, action: "admin_token.create", target: String(id), details: { name }, requestId });
      return { id, name };
    });
  }
}
