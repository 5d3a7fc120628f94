import type { Database } from "bun:sqlite";
import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { assertWalletFree, rethrowUniqueViolation } from "./user-conflicts";
import { FieldCheck } from "./user-fields";
import { emitUserUpdated, getUserOrThrow } from "./users";

export interface WalletRow {
  id: number;
  user_id: number;
  partner: string;
  mode: "sandbox" | "live";
  blockchain: string;
  wallet_address: string;
  label: string | null;
  is_primary: number;
  verified: number;
  verified_at: string | null;
  is_hidden: number;
  session_connected_at: string | null;
  created_at: string;
  updated_at: string;
}

export type WalletView = ReturnType<typeof walletView>;

export const walletView = (w: WalletRow) => ({
  blockchain: w.blockchain,
  wallet_address: w.wallet_address,
  label: w.label,
  is_primary: w.is_primary,
  verified: w.verified,
  verified_at: w.verified_at,
});

/** A user's wallets, the primary first, then in the order they were linked. */
export function walletsOf(db: Database, userId: number): WalletView[] {
  return (db.query("SELECT * FROM wallet_links WHERE user_id = ? ORDER BY is_primary DESC, id ASC").all(userId) as WalletRow[]).map(walletView);
}

/** Wallets of many users in one query (a list page), keyed by user id. */
export function walletsByUser(db: Database, userIds: number[]): Map<number, WalletView[]> {
  const out = new Map<number, WalletView[]>(userIds.map((id) => [id, []]));
  if (!userIds.length) return out;
  const rows = db
    .query("SELECT * FROM wallet_links WHERE user_id IN (SELECT value FROM json_each(?)) ORDER BY is_primary DESC, id ASC")
    .all(JSON.stringify(userIds)) as WalletRow[];
  for (const r of rows) out.get(r.user_id)?.push(walletView(r));
  return out;
}

export interface NewWallet {
  blockchain: string;
  wallet_address: string;
  label?: string | null;
  is_primary?: boolean;
  verified?: boolean;
}

/**
 * Inserts or updates one link and keeps "exactly one primary per user with wallets". Call inside a
 * transaction: demoting the old primary and promoting the new one must commit together (the partial unique
 * index would refuse two primaries, and a crash between them must not leave none). Returns what changed.
 */
export function upsertWallet(db: Database, owner: Owner, userId: number, w: NewWallet, now: string): string[] {
  assertWalletFree(db, owner, w.blockchain, w.wallet_address, userId);
  const existing = db
    .query("SELECT * FROM wallet_links WHERE partner = ? AND mode = ? AND blockchain = ? AND wallet_address = ?")
    .get(owner.partner, owner.mode, w.blockchain, w.wallet_address) as WalletRow | null;
  const primary = db.query("SELECT id FROM wallet_links WHERE user_id = ? AND is_primary = 1").get(userId) as { id: number } | null;
  // is_primary=false never demotes: a user with wallets always has one primary; promote another instead.
  const promote = (w.is_primary === true || !primary) && !(existing && existing.is_primary === 1);
  const changes: string[] = [];
  if (promote && primary) db.query("UPDATE wallet_links SET is_primary = 0, updated_at = ? WHERE id = ?").run(now, primary.id);
  if (promote) changes.push("wallet_address");

  const verified = w.verified === undefined ? null : w.verified ? 1 : 0;
  const verifiedAt = w.verified ? now : null;
  try {
    if (!existing) {
      db.query(
        `INSERT INTO wallet_links (user_id, partner, mode, blockchain, wallet_address, label, is_primary, verified, verified_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(userId, owner.partner, owner.mode, w.blockchain, w.wallet_address, w.label ?? null, promote ? 1 : 0, verified ?? 0, verifiedAt, now, now);
      return ["wallets", ...changes];
    }
    const label = w.label === undefined ? existing.label : w.label;
    // verified=true always stamps a new verified_at: re-verifying is how a stale verification becomes fresh.
    const changed = promote || label !== existing.label || (verified !== null && (verified !== existing.verified || w.verified === true));
    if (!changed) return [];
    db.query("UPDATE wallet_links SET label = ?, is_primary = ?, verified = ?, verified_at = ?, updated_at = ? WHERE id = ?").run(
      label,
      promote ? 1 : existing.is_primary,
      verified ?? existing.verified,
      verified === null ? existing.verified_at : verifiedAt,
      now,
      existing.id,
    );
    return ["wallets", ...changes];
  } catch (err) {
    rethrowUniqueViolation(err, w);
  }
}

export interface LinkWalletInput {
  wallet_address: string;
  blockchain?: string;
  label?: string | null;
  is_primary?: boolean;
  verified?: boolean;
}

/**
 * POST /users/{id}/wallets. Idempotent by address: linking an address the user already has updates its label,
 * primary flag or verification; an unchanged re-link writes nothing and emits nothing. Call inside the
 * request's idempotency transaction.
 */
export function linkWallet(ctx: AppContext, owner: Owner, rawUserId: string, input: LinkWalletInput): { wallets: WalletView[] } {
  const user = getUserOrThrow(ctx, owner, rawUserId);
  const check = new FieldCheck();
  const blockchain = check.blockchain(input.blockchain);
  const address = check.walletAddress(input.wallet_address, blockchain);
  const label = check.label(input.label);
  check.orThrow("wallet");
  const db = ctx.db.sqlite;
  const now = ctx.clock.now().toISOString();
  const changes = upsertWallet(
    db,
    owner,
    user.id,
    { blockchain: blockchain!, wallet_address: address!, label, is_primary: input.is_primary, verified: input.verified },
    now,
  );
  if (changes.length) {
    db.query("UPDATE partner_users SET updated_at = ? WHERE id = ?").run(now, user.id);
    emitUserUpdated(ctx, db, owner, user, changes);
  }
  return { wallets: walletsOf(db, user.id) };
}

/**
 * A wallet's owner proved control of it (a signed Sign-In-With-Solana message, src/messenger/wallets/proof.ts):
 * every partner's live link holding this Solana address is stamped verified at `at`. Runs inside the caller's
 * transaction; returns how many links it stamped.
 */
export function markSolanaWalletProven(db: Database, address: string, at: string): number {
  return db
    .query("UPDATE wallet_links SET verified = 1, verified_at = ?1, updated_at = ?1 WHERE blockchain = 'solana' AND wallet_address = ?2 AND mode = 'live'")
    .run(at, address).changes;
}

/** The live user of `partner` whose wallet links hold this Solana address, if any. */
export function liveUserHoldingSolanaWallet(db: Database, partner: string, address: string): number | null {
  const owner = db
    .query<{ user_id: number }, [string, string]>(
      "SELECT user_id FROM wallet_links WHERE partner = ? AND mode = 'live' AND blockchain = 'solana' AND wallet_address = ?",
    )
    .get(partner, address);
  return owner?.user_id ?? null;
}
