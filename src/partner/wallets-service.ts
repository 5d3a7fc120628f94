import type { Static } from "elysia";
import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { NotFoundError } from "../http/errors/errors";
import { schemaView } from "../http/schema-view";
import * as store from "./store/wallets";
import { lockUser, touchUser } from "./store/users";
import { assertWalletFree, rethrowUniqueViolation } from "./user-conflicts";
import { FieldCheck } from "./user-fields";
import { emitUserUpdated, getUserOrThrow } from "./users";
import { type UsersModel, WalletLink } from "./users-model";

export type { WalletRow } from "./store/wallets";
export { liveUserHoldingSolanaWallet, markSolanaWalletProven } from "./store/wallets";
type WalletRow = store.WalletRow;

export type WalletView = ReturnType<typeof walletView>;

// The spec types label as a string: a wallet linked without one answers "" (a label set is 1–64 characters).
export const walletView = (w: WalletRow) => schemaView(WalletLink, w, { label: w.label ?? "" });

/** A user's wallets, the primary first, then in the order they were linked. */
export async function walletsOf(q: Queryable, userId: number): Promise<WalletView[]> {
  return (await store.walletsOfUser(q, userId)).map(walletView);
}

/** Wallets of many users in one query (a list page), keyed by user id. */
export async function walletsByUser(q: Queryable, userIds: number[]): Promise<Map<number, WalletView[]>> {
  const out = new Map<number, WalletView[]>(userIds.map((id) => [id, []]));
  if (!userIds.length) return out;
  for (const r of await store.walletsOfUsers(q, userIds)) out.get(r.user_id)?.push(walletView(r));
  return out;
}

export interface NewWallet {
  blockchain: string;
  wallet_address: string;
  label?: string | null;
  is_primary?: boolean;
  verified?: boolean;
  is_hidden?: boolean;
  connected_session?: boolean;
}

/**
 * Inserts or updates one link and keeps "exactly one primary per user with wallets". Call inside a
 * transaction: demoting the old primary and promoting the new one must commit together (the partial unique
 * index would refuse two primaries, and a crash between them must not leave none). Returns what changed.
 */
export async function upsertWallet(t: Queryable, owner: Owner, userId: number, w: NewWallet, now: string): Promise<string[]> {
  // Two links of one user at once (on two instances) would both read the same primary and both promote: the
  // user's row lock makes the second wait and read the first's result. A user deleted since the caller read it is
  // unknown now, as it would be to a later call (the link would otherwise fail on its foreign key).
  if (!(await lockUser(t, userId))) throw new NotFoundError("user", userId);
  const existing = await assertWalletFree(t, owner, w.blockchain, w.wallet_address, userId);
  const primary = await store.primaryWalletId(t, userId);
  // is_primary=false never demotes: a user with wallets always has one primary; promote another instead.
  const promote = (w.is_primary === true || primary === null) && !(existing && existing.is_primary === 1);
  const changes: string[] = [];
  if (promote && primary !== null) await store.demoteWallet(t, primary, now);
  if (promote) changes.push("wallet_address");

  const verified = w.verified === undefined ? null : w.verified ? 1 : 0;
  const verifiedAt = w.verified ? now : null;
  const hidden = w.is_hidden === undefined ? null : w.is_hidden ? 1 : 0;
  // connected_session=true stamps now (a new session); false clears it; absent keeps what is there.
  const session = w.connected_session === undefined ? undefined : w.connected_session ? now : null;
  try {
    if (!existing) {
      await store.insertWallet(t, owner, {
        user_id: userId,
        blockchain: w.blockchain,
        wallet_address: w.wallet_address,
        label: w.label ?? null,
        is_primary: promote ? 1 : 0,
        verified: verified ?? 0,
        verified_at: verifiedAt,
        is_hidden: hidden ?? 0,
        session_connected_at: session ?? null,
        at: now,
      });
      return ["wallets", ...changes];
    }
    const label = w.label === undefined ? existing.label : w.label;
    // verified=true always stamps a new verified_at: re-verifying is how a stale verification becomes fresh.
    const changed =
      promote ||
      label !== existing.label ||
      (verified !== null && (verified !== existing.verified || w.verified === true)) ||
      (hidden !== null && hidden !== existing.is_hidden) ||
      (session !== undefined && (session !== null || existing.session_connected_at !== null));
    if (!changed) return [];
    await store.updateWallet(t, existing.id, {
      label,
      is_primary: promote ? 1 : existing.is_primary,
      verified: verified ?? existing.verified,
      verified_at: verified === null ? existing.verified_at : verifiedAt,
      is_hidden: hidden ?? existing.is_hidden,
      session_connected_at: session === undefined ? existing.session_connected_at : session,
      at: now,
    });
    return ["wallets", ...changes];
  } catch (err) {
    rethrowUniqueViolation(err, w);
  }
}

/** What POST /users/:user_id/wallets takes (its body, as validated): booleans, or 0/1 as a wallet link shows them. */
export type LinkWalletInput = Static<typeof UsersModel.linkBody>;

/** true/false, or the 0/1 of a wallet link's own fields; undefined stays undefined. */
const boolOf = (v: boolean | 0 | 1 | undefined): boolean | undefined => (v === undefined ? undefined : v === true || v === 1);

/**
 * POST /users/{id}/wallets. Idempotent by address: linking an address the user already has updates its label,
 * primary flag or verification; an unchanged re-link writes nothing and emits nothing. Call inside the
 * request's idempotency transaction.
 */
export async function linkWallet(
  t: Queryable,
  ctx: Pick<AppContext, "clock" | "rng">,
  owner: Owner,
  rawUserId: string,
  input: LinkWalletInput,
): Promise<{ wallets: WalletView[] }> {
  const user = await getUserOrThrow(t, owner, rawUserId);
  const check = new FieldCheck();
  const blockchain = check.blockchain(input.blockchain);
  const address = check.walletAddress(input.wallet_address, blockchain);
  const label = check.label(input.label);
  check.orThrow("wallet");
  const now = ctx.clock.now().toISOString();
  const changes = await upsertWallet(
    t,
    owner,
    user.id,
    {
      blockchain: blockchain!,
      wallet_address: address!,
      label,
      is_primary: boolOf(input.is_primary),
      verified: boolOf(input.verified),
      is_hidden: boolOf(input.is_hidden),
      connected_session: boolOf(input.connected_session),
    },
    now,
  );
  if (changes.length) {
    await touchUser(t, user.id, now);
    await emitUserUpdated(t, ctx, owner, user, changes);
  }
  return { wallets: await walletsOf(t, user.id) };
}
