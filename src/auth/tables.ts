import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { owner, timestamps } from "../db/columns";

/** Partner API keys. Secrets are AES-256-GCM ciphertext under HERALD_MASTER_KEY, never plaintext. */
export const partnerKeys = sqliteTable(
  "partner_keys",
  {
    keyId: text("key_id").primaryKey(),
    ...owner(),
    scopes: text("scopes").notNull(), // comma list, sorted
    allowedIps: text("allowed_ips").notNull().default(""), // comma list of addresses / CIDR ranges; empty = any
    status: text("status", { enum: ["active", "disabled"] })
      .notNull()
      .default("active"),
    secretCiphertext: text("secret_ciphertext").notNull(),
    previousSecretCiphertext: text("previous_secret_ciphertext"),
    previousSecretValidUntil: text("previous_secret_valid_until"),
    ...timestamps(),
    lastUsedAt: text("last_used_at"),
    disabledReason: text("disabled_reason"),
  },
  (t) => [index("partner_keys_partner_idx").on(t.partner)],
);

/** Used nonces per key; a row exists for 2× the skew window, so a replay inside it hits the primary key. */
export const partnerNonces = sqliteTable(
  "partner_nonces",
  {
    keyId: text("key_id").notNull(),
    nonce: text("nonce").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.nonce] }), index("partner_nonces_expires_idx").on(t.expiresAt)],
);

/**
 * Idempotency records: (key id, Idempotency-Key) → fingerprint and the final response. Written in the same
 * transaction as the effect, so a stored response always means the effect happened, and vice versa.
 */
export const idempotencyRecords = sqliteTable(
  "idempotency_records",
  {
    keyId: text("key_id").notNull(),
    idempotencyKey: text("idempotency_key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: ["in_progress", "completed"] }).notNull(),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    createdAt: text("created_at").notNull(),
    lockedUntil: text("locked_until"),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.idempotencyKey] }), index("idempotency_expires_idx").on(t.expiresAt)],
);

/** Operator tokens, stored as SHA-256 hashes only. */
export const adminTokens = sqliteTable(
  "admin_tokens",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull(),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("admin_tokens_hash_idx").on(t.tokenHash)],
);

/** Every admin mutation: who, what, when, and the request that did it. Written in the mutation's transaction. */
export const adminAudit = sqliteTable(
  "admin_audit",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: text("at").notNull(),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    details: text("details"),
    requestId: text("request_id"),
  },
  (t) => [
    index("admin_audit_at_idx").on(t.at),
    // The rows of one action (auditTargetsWithRequestId: a manual grant's request_id already used).
    index("admin_audit_action_idx").on(t.action, t.at),
  ],
);

/**
 * Operator browser sessions (GET/POST /admin/sign-in): an admin token pasted once becomes an HttpOnly,
 * SameSite=Strict cookie. Only SHA-256 hashes of the session id and its CSRF token are stored; a session ends at
 * expires_at, on sign-out, or when revoked (or when the admin token it came from is revoked).
 */
export const adminSessions = sqliteTable(
  "admin_sessions",
  {
    sessionHash: text("session_hash").primaryKey(),
    csrfHash: text("csrf_hash").notNull(),
    adminTokenId: integer("admin_token_id").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    lastSeenAt: text("last_seen_at"),
    revokedAt: text("revoked_at"),
    clientIp: text("client_ip"),
    userAgent: text("user_agent"),
  },
  (t) => [
    index("admin_sessions_token_idx").on(t.adminTokenId),
    // The auth-prune job: WHERE expires_at <= ? OR revoked_at <= ?, each side down its own index (a scan otherwise);
    // only revoked sessions have an entry in the second.
    index("admin_sessions_expires_idx").on(t.expiresAt),
    index("admin_sessions_revoked_idx").on(t.revokedAt).where(sql`revoked_at IS NOT NULL`),
  ],
);

/**
 * One row (id 1): which master key the database was made with — its key check value, HMAC-SHA256(key, a fixed
 * label), and its public fingerprint. Compared at every start (src/auth/master-key-check.ts).
 */
export const masterKeyCheck = sqliteTable("master_key_check", {
  id: integer("id").primaryKey(),
  fingerprint: text("fingerprint").notNull(),
  checkValue: text("check_value").notNull(),
  createdAt: text("created_at").notNull(),
});
