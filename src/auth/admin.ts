import { createHash } from "node:crypto";
import type { Statement } from "bun:sqlite";
import type { AppContext } from "../context";
import type { Actor } from "./actors";
import { writeAudit } from "./audit";
import { ValidationError } from "../http/errors";

export const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

interface TokenRow {
  id: number;
  name: string;
  last_used_at: string | null;
}

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

  /** ADMIN_TOKEN from the environment: registered once (idempotent on its hash), never printed. */
  ensureBootstrap(token: string): void {
    if (this.byHash.get(sha256Hex(token))) return;
    this.insert("env:ADMIN_TOKEN", token, { kind: "cli", user: "bootstrap" }, null);
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
