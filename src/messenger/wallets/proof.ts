// Wallet proof: Sign-In-With-Solana. The challenge is a single-use nonce inside a SIWS message (domain, address,
// statement, nonce, issued-at, expiration); the claim checks the Ed25519 signature of exactly that message by
// the claimed address, consumes the nonce, and records the proof. A proof is a fact about the wallet, so it is
// also stamped on partner wallet links holding the address (link.ts).
import { createPublicKey, verify } from "node:crypto";
import bs58 from "bs58";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { observeEvent } from "../games/mission-sources";
import { lockedPlayer } from "../players";
import { challengeOf, consumeChallenge, insertChallenge, recordWallet } from "../store/wallets";
import { linkProvenWallet } from "./link";

/** How long a challenge may be signed and sent back. */
export const CHALLENGE_TTL_SECONDS = 600;
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export function siwsMessage(f: {
  domain: string;
  address: string;
  statement: string;
  uri: string;
  nonce: string;
  issuedAt: string;
  expiresAt: string;
}): string {
  return [
    `${f.domain} wants you to sign in with your Solana account:`,
    f.address,
    "",
    f.statement,
    "",
    `URI: ${f.uri}`,
    "Version: 1",
    "Chain ID: mainnet",
    `Nonce: ${f.nonce}`,
    `Issued At: ${f.issuedAt}`,
    `Expiration Time: ${f.expiresAt}`,
  ].join("\n");
}

function publicKeyBytes(address: string): Buffer | null {
  try {
    const raw = Buffer.from(bs58.decode(address));
    return raw.length === 32 ? raw : null;
  } catch {
    return null;
  }
}

export async function issueChallenge(ctx: AppContext, telegramUserId: number, address: string) {
  if (!publicKeyBytes(address)) {
    throw new AppError("invalid_payload", "address must be a base58 Solana address (32 bytes)", {
      details: [{ field: "body.address", problem: "must be a base58 Solana address of 32 bytes" }],
    });
  }
  const now = ctx.clock.now();
  const base = new URL(ctx.config.publicBaseUrl);
  const nonce = Buffer.from(ctx.rng.bytes(16)).toString("hex");
  const issuedAt = now.toISOString();
  const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_SECONDS * 1000).toISOString();
  const statement = `Link this wallet to Telegram user ${telegramUserId} on ${base.host}.`;
  const message = siwsMessage({ domain: base.host, address, statement, uri: base.origin, nonce, issuedAt, expiresAt });
  await ctx.store.tx(async (t) => {
    await lockedPlayer(t, telegramUserId, issuedAt);
    await insertChallenge(t, { nonce, telegram_user_id: telegramUserId, address, message, issued_at: issuedAt, expires_at: expiresAt });
  });
  return { challenge: { nonce, address, domain: base.host, statement, message, issued_at: issuedAt, expires_at: expiresAt } };
}

function signatureValid(address: string, message: string, signature: string): boolean {
  const key = publicKeyBytes(address);
  let sig: Uint8Array;
  try {
    sig = bs58.decode(signature);
  } catch {
    return false;
  }
  if (!key || sig.length !== 64) return false;
  const publicKey = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, key]), format: "der", type: "spki" });
  return verify(null, Buffer.from(message, "utf8"), publicKey, sig);
}

export async function verifyClaim(ctx: AppContext, telegramUserId: number, input: { nonce: string; address: string; message: string; signature: string }) {
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    await lockedPlayer(t, telegramUserId, now);
    const c = await challengeOf(t, input.nonce, telegramUserId);
    if (!c) throw new AppError("wallet_nonce_unknown", "This nonce was not issued to this player");
    if (c.consumed_at)
      throw new AppError("wallet_nonce_used", `This challenge was already used at ${c.consumed_at}`, { details: { consumed_at: c.consumed_at } });
    if (c.expires_at <= now) throw new AppError("wallet_nonce_expired", `This challenge expired at ${c.expires_at}`, { details: { expires_at: c.expires_at } });
    if (input.address !== c.address || input.message !== c.message) {
      throw new AppError(
        "wallet_message_mismatch",
        input.address !== c.address ? "address is not the one the challenge was issued for" : "message is not the challenge's message, byte for byte",
      );
    }
    if (!signatureValid(c.address, c.message, input.signature)) {
      throw new AppError("wallet_signature_invalid", "The signature (base58, 64 bytes) does not verify for this message and address");
    }
    // Conditional: a nonce consumed by a request that committed meanwhile is used, whatever was read above.
    if (!(await consumeChallenge(t, c.nonce, now))) throw new AppError("wallet_nonce_used", "This challenge was already used");
    // Proving the same wallet again is not progress: only a wallet new to this player counts.
    if (await recordWallet(t, telegramUserId, c.address, now)) await observeEvent(t, telegramUserId, "wallet.proof");
    const link = await linkProvenWallet(ctx, t, telegramUserId, c.address, now);
    return { wallet: { address: c.address, verified_at: now }, linked_user_id: link.linkedUserId, partner_wallet_links_verified: link.partnerLinksVerified };
  });
}
