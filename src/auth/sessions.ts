import { createHmac, timingSafeEqual } from "node:crypto";
import type { AppContext } from "../context";
import type { BatchedDeleteResult } from "../db/batched-delete";
import { NotFoundError } from "../http/errors/errors";
import { type KeyPageRequest, keyPageOf } from "../http/pagination";
import { schemaView } from "../http/schema-view";
import type { Actor } from "./actors";
import { AdminSessionView } from "./model";
import { sha256Hex } from "./admin";
import { recordAudit } from "./audit";
import * as store from "./store/sessions";
import type { SessionRow } from "./store/sessions";

// Operator browser sessions (docs/operations.md, "Operator sign-in and pages"). A browser cannot send the admin
// bearer token, so POST /admin/sign-in trades one for a session cookie. What is stored is never enough to act:
// the session id (32 random bytes) is kept only as its SHA-256, and so is the session's CSRF token. The CSRF
// token is derived from the session id (HMAC-SHA256 keyed by it), so a page can print it into its forms on
// every request without the server keeping it in clear; knowing the token does not reveal the session id.

export type AdminActor = Extract<Actor, { kind: "admin" }>;

/** A session that passed every check: not expired, not revoked, its admin token not revoked. */
export interface ActiveSession {
  /** The public handle: the first 16 hex characters of the session hash (names it in lists and revocations). */
  handle: string;
  sessionHash: string;
  csrfHash: string;
  expiresAt: string;
  actor: AdminActor;
}

const HANDLE_CHARS = 16;
/** last_seen_at is written at most this often per session: a page view should not always cost a write. */
const TOUCH_EVERY_MS = 60_000;
/** Revoked sessions stay listed this long (who signed out when), then the prune job deletes them. */
const KEEP_REVOKED_MS = 24 * 3600_000;
/** The cursor of GET /admin/sessions: the last row's created_at and public handle. */
export const SESSION_CURSOR = ["text", "text"] as const;

export const sessionHandle = (sessionHash: string) => sessionHash.slice(0, HANDLE_CHARS);
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The CSRF token of a session: HMAC-SHA256(session id, "herald-csrf"), base64url. */
export const csrfTokenOf = (sessionId: string) => createHmac("sha256", sessionId).update("herald-csrf").digest("base64url");

/** Constant-time equality of two hex digests (both are SHA-256 of something, so equal lengths when valid). */
export function sameDigest(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, "hex");
  const b = Buffer.from(bHex, "hex");
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

export class AdminSessions {
  constructor(private readonly ctx: AppContext) {}

  private now(): string {
    return this.ctx.clock.now().toISOString();
  }

  /** A new session for an operator who proved an admin token; returns the cookie value and its CSRF token once. */
  async create(actor: AdminActor, client: { ip: string | null; userAgent: string | null }, requestId: string | null) {
    const sessionId = Buffer.from(this.ctx.rng.bytes(32)).toString("base64url");
    const csrfToken = csrfTokenOf(sessionId);
    const sessionHash = sha256Hex(sessionId);
    const now = this.now();
    const expiresAt = new Date(Date.parse(now) + this.ctx.config.adminSessionTtlSeconds * 1000).toISOString();
    await this.ctx.store.tx(async (t) => {
      await store.insertSession(t, {
        hash: sessionHash,
        csrfHash: sha256Hex(csrfToken),
        tokenId: actor.tokenId,
        at: now,
        expiresAt,
        ip: client.ip,
        userAgent: client.userAgent?.slice(0, 256) ?? null,
      });
      await recordAudit(t, {
        at: now,
        actor,
        action: "admin_session.sign_in",
        target: sessionHandle(sessionHash),
        details: { expires_at: expiresAt, client_ip: client.ip },
        requestId,
      });
    });
    return { sessionId, csrfToken, expiresAt, handle: sessionHandle(sessionHash) };
  }

  /** The session a cookie names, if it is still good; touches last_seen_at at most once a minute. */
  async resolve(sessionId: string): Promise<ActiveSession | null> {
    if (!SESSION_ID_PATTERN.test(sessionId)) return null;
    const row = await store.sessionByHash(this.ctx.store, sha256Hex(sessionId));
    const now = this.now();
    if (!row || !isActive(row, now)) return null;
    if (!row.last_seen_at || Date.parse(now) - Date.parse(row.last_seen_at) >= TOUCH_EVERY_MS) await store.touchSession(this.ctx.store, row.session_hash, now);
    return {
      handle: sessionHandle(row.session_hash),
      sessionHash: row.session_hash,
      csrfHash: row.csrf_hash,
      expiresAt: row.expires_at,
      actor: { kind: "admin", tokenId: row.admin_token_id, name: row.token_name },
    };
  }

  /** Whether `token` is the session's CSRF token; compares SHA-256 digests in constant time. */
  csrfMatches(session: ActiveSession, token: string | null | undefined): boolean {
    return typeof token === "string" && token.length > 0 && token.length <= 128 && sameDigest(sha256Hex(token), session.csrfHash);
  }

  signOut(session: ActiveSession, requestId: string | null): Promise<void> {
    return this.revokeRow(session.sessionHash, session.actor, "admin_session.sign_out", requestId);
  }

  /** Revokes the session with this public handle (any operator may end any session); 404 when unknown. */
  async revokeByHandle(handle: string, actor: Actor, requestId: string | null) {
    const row = /^[0-9a-f]{16}$/.test(handle) ? await store.sessionByHandle(this.ctx.store, handle) : null;
    if (!row || sessionHandle(row.session_hash) !== handle) throw new NotFoundError("Session", handle);
    if (!row.revoked_at) await this.revokeRow(row.session_hash, actor, "admin_session.revoke", requestId);
    return view((await store.sessionByHash(this.ctx.store, row.session_hash))!, this.now());
  }

  /** A page of sessions, newest first: the live ones and those ended within the last day (the prune job ends the rest). */
  async list(page: KeyPageRequest) {
    const [createdAt, handle] = page.after ?? [];
    const after = typeof createdAt === "string" && typeof handle === "string" ? { createdAt, handle } : null;
    const rows = await store.sessionsPage(this.ctx.store, { after, limit: page.limit + 1, offset: page.offset });
    const p = keyPageOf(rows, page, (r) => [r.created_at, sessionHandle(r.session_hash)]);
    const now = this.now();
    return { ...p, items: p.items.map((r) => view(r, now)) };
  }

  /** Deletes expired sessions and those revoked more than a day ago (the auth-prune job). */
  pruneExpired(): Promise<BatchedDeleteResult> {
    const now = this.now();
    return store.pruneSessions(this.ctx.store, now, new Date(Date.parse(now) - KEEP_REVOKED_MS).toISOString());
  }

  private async revokeRow(sessionHash: string, actor: Actor, action: string, requestId: string | null): Promise<void> {
    const now = this.now();
    await this.ctx.store.tx(async (t) => {
      if (await store.revokeSession(t, sessionHash, now)) await recordAudit(t, { at: now, actor, action, target: sessionHandle(sessionHash), requestId });
    });
  }
}

const isActive = (row: SessionRow, now: string) => row.revoked_at === null && row.token_revoked_at === null && row.expires_at > now;

/** A session as GET /admin/sessions lists it (AdminSessionView). */
const view = (row: SessionRow, now: string) =>
  schemaView(AdminSessionView, row, { id: sessionHandle(row.session_hash), admin_token_name: row.token_name, active: isActive(row, now) });
