import type { Owner } from "../auth/actors";
import { insertedId, type Queryable } from "../db/port";
import type { RowOf } from "../db/rows";
import type { donationClaims } from "./tables";

// donation_claims and email_outbox: the only SQL that touches them.

export type ClaimRow = RowOf<typeof donationClaims>;

export async function insertClaim(
  t: Queryable,
  owner: Owner,
  c: Pick<ClaimRow, "key_id" | "campaign_id" | "amount" | "recipient_email" | "recipient_wallet" | "user_id" | "claim_code" | "email_sent" | "created_at">,
): Promise<ClaimRow> {
  return (await t.get<ClaimRow>(
    `INSERT INTO donation_claims (partner, mode, key_id, campaign_id, amount, recipient_email, recipient_wallet, user_id, claim_code, status, email_sent, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'issued', ?, ?) RETURNING *`,
    [owner.partner, owner.mode, c.key_id, c.campaign_id, c.amount, c.recipient_email, c.recipient_wallet, c.user_id, c.claim_code, c.email_sent, c.created_at],
  ))!;
}

export const claimByCode = (q: Queryable, owner: Owner, code: string) =>
  q.get<ClaimRow>("SELECT * FROM donation_claims WHERE claim_code = ? AND partner = ? AND mode = ?", [code, owner.partner, owner.mode]);

export type ClaimPageRow = Pick<ClaimRow, "mode" | "campaign_id" | "amount" | "status" | "created_at" | "redeemed_at">;

/** A claim by its code alone, whoever issued it: its recipient's page (claim-page.ts) shows no owner. */
export const claimForPage = (q: Queryable, code: string) =>
  q.get<ClaimPageRow>("SELECT mode, campaign_id, amount, status, created_at, redeemed_at FROM donation_claims WHERE claim_code = ?", [code]);

/** issued → redeemed; null when the claim was not issued any more (another redeem won). */
export const redeemIssuedClaim = (t: Queryable, id: number, at: string, by: string | null) =>
  t.get<ClaimRow>("UPDATE donation_claims SET status = 'redeemed', redeemed_at = ?, redeemed_by = ? WHERE id = ? AND status = 'issued' RETURNING *", [
    at,
    by,
    id,
  ]);

export async function queueEmail(t: Queryable, m: { to: string; subject: string; body: string; at: string }): Promise<number> {
  return insertedId(t, "INSERT INTO email_outbox (to_address, subject, body, status, created_at) VALUES (?, ?, ?, 'queued', ?) RETURNING id", [
    m.to,
    m.subject,
    m.body,
    m.at,
  ]);
}

/** The donations domain's part of the sandbox reset (src/donations/sandbox-service.ts): what remains, in its transaction. */
export const SANDBOX_DELETES = [["donation_claims", "DELETE FROM donation_claims WHERE partner = ? AND mode = 'sandbox'"]] as const;

/** The bulk of the partner's sandbox claims, in batches before the reset's transaction, down donation_claims_owner_idx. */
export const sandboxBatch = (partner: string) => ({ table: "donation_claims" as const, where: "partner = ? AND mode = 'sandbox'", params: [partner] });
