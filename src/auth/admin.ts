import { createHash } from "node:crypto";
import type { Statement } from "bun:sqlite";
import type { AppContext } from "../context";
import type { Actor } from "./actors";
import { writeAudit } from "./audit";
import { NotFoundError, ValidationError } from "../http/errors";

export const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

interface TokenRow {
  id: number;
  name: string;
  last_used_at: string | null;
}

/** An admin token as `herald admin-token list` shows it: never the token, never its hash. */
export interface AdminTokenView {
  id: number;
  name: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const VIEW = "SELECT id, name, created_at, last_used_at, revoked_at FROM admin_tokens";

/**
 * Operator tokens: random, shown once, stored as SHA-256 hashes. A lookup by hash is already constant-time
 * with respect to the secret (an attacker cannot steer the hash), so no secret is ever compared byte by byte.
 */
export class AdminTokens {
  private readonly byHash: Statement;
  private readonly touch: Statement;

  constructor(private readonly ctx: AppContext) {
    this.byHash = ctx.db.sqlite.prepare("SELECT id, name, last_used_at FROM admin_tokens WHERE token_hash = ? AND revoked_at IS NULL");
    this.touch = ctx.db.sqlite.prepare("UPDATE admin_tokens SET last_used_at = ? WHERE id = ?");
  }

  verify(token: string): Extract<Actor, { kind: "admin" }> | null {
    const row = this.byHash.get(sha256Hex(token)) as TokenRow | null;
    if (!row) return null;
    const now = this.ctx.clock.now().toISOString();
    if (!row.last_used_at || Date.parse(now) - Date.parse(row.last_used_at) >= 60_000) this.touch.run(now, row.id);
    return { kind: "admin", tokenId: row.id, name: row.name };
  }

  create(name: string, actor: Actor, requestId: string | null = null): { id: number; name: string; token: string } {
    if (!/^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/.test(name)) {
      throw new ValidationError("Invalid token name", [{ field: "name", problem: "must be 1–64 letters, digits, spaces or . _ @ -" }]);
    }
    const token = "hat_" + Buffer.from(this.ctx.rng.bytes(32)).toString("base64url");
    return { ...this.insert(name, token, actor, requestId), token };
  }

  /**
   * ADMIN_TOKEN from the environment: registered once (idempotent on its hash), never printed. A revoked one
   * stays revoked: an operator who revoked it but left the variable set must not get it back at the next start.
   */
  ensureBootstrap(token: string): void {
    if (this.ctx.db.sqlite.query("SELECT 1 FROM admin_tokens WHERE token_hash = ?").get(sha256Hex(token))) return;
    this.insert("env:ADMIN_TOKEN", token, { kind: "cli", user: "bootstrap" }, null);
  }

  /** Every token, oldest first, revoked ones included (they stay listed: who had access, and until when). */
  list(): AdminTokenView[] {
    return this.ctx.db.sqlite.query(`${VIEW} ORDER BY id`).all() as AdminTokenView[];
  }

  /**
   * Revokes a token at once: verify() and the operator sessions opened with it check revoked_at on every request
   * (no cache), so its bearer calls are refused and its browser sessions end from the next request on. Its open
   * sessions are also marked revoked, so GET /admin/sessions shows them ended. Revoking a revoked token changes
   * nothing and is not audited again. Unknown id → 404.
   */
  revoke(id: number, actor: Actor, requestId: string | null = null): { token: AdminTokenView; sessionsEnded: number; alreadyRevoked: boolean } {
    const sqlite = this.ctx.db.sqlite;
    const now = this.ctx.clock.now().toISOString();
    const get = () => sqlite.query(`${VIEW} WHERE id = ?`).get(id) as AdminTokenView | null;
    return sqlite.transaction(() => {
      const before = get();
      if (!before) throw new NotFoundError("Admin token", String(id));
      if (before.revoked_at !== null) return { token: before, sessionsEnded: 0, alreadyRevoked: true };
      sqlite.query("UPDATE admin_tokens SET revoked_at = ? WHERE id = ?").run(now, id);
      const sessionsEnded = sqlite
        .query("UPDATE admin_sessions SET revoked_at = ? WHERE admin_token_id = ? AND revoked_at IS NULL AND expires_at > ?")
        .run(now, id, now).changes;
      writeAudit(sqlite, {
        at: now,
        actor,
        action: "admin_token.revoke",
        target: String(id),
        details: { name: before.name, sessions_ended: sessionsEnded },
        requestId,
      });
      return { token: get()!, sessionsEnded, alreadyRevoked: false };
    })();
  }

  count(): number {
    return (this.ctx.db.sqlite.query("SELECT count(*) AS n FROM admin_tokens").get() as { n: number }).n;
  }

  private insert(name: string, token: string, actor: Actor, requestId: string | null): { id: number; name: string } {
    const now = this.ctx.clock.now().toISOString();
    const sqlite = this.ctx.db.sqlite;
    return sqlite.transaction(() => {
      const { id } = sqlite.query("INSERT INTO admin_tokens (name, token_hash, created_at) VALUES (?, ?, ?) RETURNING id").get(name, sha256Hex(token), now) as {
        id: number;
      };
      writeAudit(sqlite, { at: now, actor, action: "admin_token.create", target: String(id), details: { name }, requestId });
      return { id, name };
    })();
  }
}
