import type { Owner } from "../auth/actors";
import { base32 } from "../auth/random-codes";
import type { AppContext } from "../context";
import { AppError, found, type ProblemDetail, problemsOrThrow } from "../http/errors/errors";
import { getUserOrThrow, requireActiveUser } from "../partner/service";
import { isAddress } from "../solana/constants";
import type { Queryable } from "../db/port";
import { emitEvent } from "../webhooks/service";
import { schemaView } from "../http/schema-view";
import { DonationsModel } from "./model";
import type { EmailSender } from "./email";
import { type ClaimRow, claimByCode, insertClaim, redeemIssuedClaim } from "./store";
export type { EmailSender } from "./email";

export const MAX_AMOUNT_DIGITS = 18;
export const MAX_AMOUNT_DECIMALS = 9;
/** A double holds 15 significant decimal digits exactly; past that a JSON number may already be rounded. */
const MAX_NUMBER_SIGNIFICANT_DIGITS = 15;
const CODE_BYTES = 20; // 160 bits: guessing one live code is hopeless even at millions of tries a second
export const CLAIM_CODE_PATTERN = /^dc_[a-z2-7]{32}$/;
const EMAIL_PATTERN = /^[^\s@<>()",;:\\[\]]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

export type IssueInput = typeof DonationsModel.issueBody.static;

/** Expands JS's shortest round-trip form ("1e-7", "1.5e+21") to plain digits, so it can be checked as a string. */
function plainDigits(n: number): string {
  const s = String(n);
  const m = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const digits = m[1]! + (m[2] ?? "");
  const point = 1 + Number(m[3]);
  if (point <= 0) return "0." + "0".repeat(-point) + digits;
  if (point >= digits.length) return digits + "0".repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * The amount as an exact, canonical decimal string ("012.50" → "12.5"), or the problem with it. Strings are
 * taken digit for digit; numbers only when short enough that JSON parsing cannot have rounded them.
 */
export function parseAmount(raw: number | string): { value: string } | { problem: string } {
  let text: string;
  if (typeof raw === "number") {
    if (!Number.isFinite(raw)) return { problem: "must be a finite number" };
    if (raw <= 0) return { problem: "must be greater than 0" };
    text = plainDigits(raw);
    if (text.replace(".", "").replace(/^0+/, "").replace(/0+$/, "").length > MAX_NUMBER_SIGNIFICANT_DIGITS) {
      return { problem: `has more than ${MAX_NUMBER_SIGNIFICANT_DIGITS} significant digits as a JSON number; send it as a decimal string` };
    }
  } else {
    text = raw;
  }
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) return { problem: 'must be a positive decimal such as "12.5" (digits, optional point; no sign, exponent or spaces)' };
  const int = m[1]!.replace(/^0+(?=\d)/, "");
  const frac = (m[2] ?? "").replace(/0+$/, "");
  if (frac.length > MAX_AMOUNT_DECIMALS) return { problem: `must have at most ${MAX_AMOUNT_DECIMALS} decimal places` };
  if ((int === "0" ? 0 : int.length) + frac.length > MAX_AMOUNT_DIGITS) return { problem: `must have at most ${MAX_AMOUNT_DIGITS} digits` };
  if (int === "0" && frac === "") return { problem: "must be greater than 0" };
  return { value: frac ? `${int}.${frac}` : int };
}

export const isEmail = (s: string): boolean => s.length <= 254 && EMAIL_PATTERN.test(s);

/** Checks everything that needs no database, so a bad request fails before any transaction starts. */
export function validateIssue(input: IssueInput): { amount: string; email: string | null; wallet: string | null } {
  const problems: ProblemDetail[] = [];
  const amount = parseAmount(input.amount);
  if ("problem" in amount) problems.push({ field: "amount", problem: amount.problem });
  const email = input.recipient.email ?? null;
  const wallet = input.recipient.wallet_address ?? null;
  if (email === null && wallet === null) problems.push({ field: "recipient", problem: "must have email or wallet_address (or both)" });
  if (email !== null && !isEmail(email)) problems.push({ field: "recipient.email", problem: "must be an email address such as name@example.com" });
  if (wallet !== null && !isAddress(wallet)) problems.push({ field: "recipient.wallet_address", problem: "must be a Solana address (base58 of 32 bytes)" });
  problemsOrThrow("donation claim", problems);
  return { amount: (amount as { value: string }).value, email, wallet };
}

export const newClaimCode = (ctx: Pick<AppContext, "rng">): string => "dc_" + base32(ctx.rng.bytes(CODE_BYTES));

type DonationCtx = Pick<AppContext, "config" | "clock" | "rng">;

const claimUrl = (ctx: Pick<AppContext, "config">, code: string) => `${ctx.config.publicBaseUrl.replace(/\/+$/, "")}/claim/${code}`;

/** Herald's emails are only queued, so `sent` appears once a future delivery worker marks a claim's email sent. */
const emailStatusOf = (r: Pick<ClaimRow, "recipient_email" | "email_sent">) => (r.email_sent ? "sent" : r.recipient_email ? "queued" : "not_requested");

export function claimView(ctx: Pick<AppContext, "config">, r: ClaimRow) {
  return schemaView(DonationsModel.claim, r, {
    claim_id: r.id,
    claim_status: r.status,
    recipient: { email: r.recipient_email, wallet_address: r.recipient_wallet },
    user_id: r.user_id === null ? null : String(r.user_id),
    partner_key_id: r.key_id,
    email_sent: r.email_sent === 1,
    email_status: emailStatusOf(r),
    claim_url: claimUrl(ctx, r.claim_code),
  });
}

function claimEmail(ctx: Pick<AppContext, "config">, to: string, campaignId: string, amount: string, code: string) {
  return {
    to,
    subject: `Your donation claim for ${campaignId}`,
    body: `A donation of ${amount} from campaign ${campaignId} is waiting for you.\n\nClaim it here: ${claimUrl(ctx, code)}\n\nClaim code: ${code}\n`,
  };
}

/** Issues a claim: the row, its queued email and the `donation.claim` event, in the caller's transaction `t` (the idempotency store's). */
export async function issueClaim(t: Queryable, ctx: DonationCtx, owner: Owner, keyId: string, input: IssueInput, email: EmailSender) {
  const valid = validateIssue(input);
  const user = input.user_id === undefined ? null : await getUserOrThrow(t, owner, input.user_id);
  if (user) requireActiveUser(user);
  const code = newClaimCode(ctx);
  const now = ctx.clock.now().toISOString();
  const outcome = valid.email ? await email.send(t, claimEmail(ctx, valid.email, input.campaign_id, valid.amount, code)) : null;
  const row = await insertClaim(t, owner, {
    key_id: keyId,
    campaign_id: input.campaign_id,
    amount: valid.amount,
    recipient_email: valid.email,
    recipient_wallet: valid.wallet,
    user_id: user?.id ?? null,
    claim_code: code,
    email_sent: outcome?.sent ? 1 : 0,
    created_at: now,
  });
  await emitEvent(t, ctx, owner, "donation.claim", {
    claim_code: code,
    campaign_id: row.campaign_id,
    amount: row.amount,
    recipient: { email: row.recipient_email, wallet_address: row.recipient_wallet },
    user_id: user ? String(user.id) : null,
  });
  return schemaView(DonationsModel.issuedClaim, claimView(ctx, row), { status: "issued", claim_status: "issued" });
}

/**
 * One of this owner's claims, or 404. Another partner's code — or a sandbox code seen from live — is answered
 * exactly like an unknown one, so a code never reveals who issued it.
 */
async function getClaimOrThrow(q: Queryable, owner: Owner, code: string): Promise<ClaimRow> {
  return found(CLAIM_CODE_PATTERN.test(code) ? await claimByCode(q, owner, code) : null, "donation claim", code);
}

export const getClaim = async (q: Queryable, ctx: Pick<AppContext, "config">, owner: Owner, code: string) =>
  claimView(ctx, await getClaimOrThrow(q, owner, code));

/**
 * issued → redeemed, exactly once. The conditional UPDATE is the guard (not the SELECT before it): of any
 * number of concurrent redeems, on one instance or several over one database, one changes the row.
 */
export async function redeemClaim(t: Queryable, ctx: DonationCtx, owner: Owner, code: string, redeemedBy: string | null) {
  const row = await getClaimOrThrow(t, owner, code);
  const refuse = (r: ClaimRow) => {
    if (r.status === "redeemed") {
      return new AppError("claim_already_redeemed", `Claim ${code} was already redeemed at ${r.redeemed_at}`, {
        details: { claim_code: code, redeemed_at: r.redeemed_at },
      });
    }
    return new AppError("conflict", `Claim ${code} is ${r.status} and cannot be redeemed`, { details: { claim_code: code, claim_status: r.status } });
  };
  if (row.status !== "issued") throw refuse(row);
  const now = ctx.clock.now().toISOString();
  const updated = await redeemIssuedClaim(t, row.id, now, redeemedBy);
  if (!updated) throw refuse(await getClaimOrThrow(t, owner, code));
  await emitEvent(t, ctx, owner, "donation.claim_redeemed", {
    claim_code: code,
    campaign_id: updated.campaign_id,
    amount: updated.amount,
    redeemed_at: now,
    redeemed_by: redeemedBy,
  });
  return claimView(ctx, updated);
}
