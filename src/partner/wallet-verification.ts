import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import { FieldCheck } from "./user-fields";
import { walletWithUser } from "./store/wallets";

export const WALLET_STATE_MODEL = ["linked", "connected_session", "verified", "stale_verification", "hidden"] as const;

const DAY_MS = 86_400_000;
const days = (n: number) => `${n} day${n === 1 ? "" : "s"}`;

/**
 * Freshness of a verification under the WALLET_REVERIFY_DAYS policy. Ages are whole days elapsed (floor), and
 * a verification is stale once its age exceeds the policy: with 30, day 30 is still fresh, day 31 is stale.
 */
export function verificationOf(verifiedAt: string | null, now: Date, reverifyDays: number) {
  const at = verifiedAt || null;
  // The spec types the age as an integer: 0 with no verification (verified false, freshness "unverified").
  const age = at ? Math.max(0, Math.floor((now.getTime() - Date.parse(at)) / DAY_MS)) : 0;
  const stale = age > reverifyDays;
  const status_text = !at
    ? "Not verified"
    : stale
      ? `Verification is ${days(age)} old; re-verify (policy ${days(reverifyDays)})`
      : age === 0
        ? "Verified today (0 days ago)"
        : `Verified ${days(age)} ago`;
  return {
    verified: at !== null,
    verified_at_utc: at,
    verification_age_days: age,
    freshness: !at ? ("unverified" as const) : stale ? ("stale" as const) : ("fresh" as const),
    status_text,
    reverify_days: reverifyDays,
  };
}

/**
 * GET /wallet-verification/{address}: the link's states, its verification freshness and its owner. An address
 * not linked to one of THIS owner's users answers 200 with `linked: false`, every other state false, "Not
 * verified" and `owner: null` — the spec's state model has `linked` as a state a wallet may lack — and the same
 * when another partner linked it, so no partner learns of another's links.
 */
export async function walletVerification(ctx: AppContext, owner: Owner, address: string, blockchainParam: string | undefined) {
  const check = new FieldCheck();
  const blockchain = check.blockchain(blockchainParam);
  check.walletAddress(address, blockchain);
  check.orThrow("wallet", "invalid_query");
  const row = await walletWithUser(ctx.store, owner, blockchain!, address);
  // A verified flag without a timestamp (never written by Herald) counts as unverified: freshness needs an age.
  const verification = verificationOf(row?.verified ? row.verified_at : null, ctx.clock.now(), ctx.config.walletReverifyDays);
  return {
    wallet: row?.wallet_address ?? address,
    blockchain: row?.blockchain ?? blockchain!,
    wallet_states: {
      linked: row !== null,
      connected_session: row !== null && row.session_connected_at !== null,
      verified: verification.verified,
      stale_verification: verification.freshness === "stale",
      hidden: row?.is_hidden === 1,
    },
    verification,
    owner: row && { user_id: row.user_id, external_id: row.external_id, is_primary: row.is_primary === 1, is_hidden: row.is_hidden === 1 },
    state_model: [...WALLET_STATE_MODEL],
  };
}
