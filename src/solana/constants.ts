import bs58 from "bs58";

/** The classic SPL Token program. Token-2022 mints are not covered (their accounts are not 165 bytes). */
export const TOKEN_PROGRAM_ID = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
/** SPL token account layout: mint (32) · owner (32) · amount (u64 LE at 64) … 165 bytes in all. */
export const TOKEN_ACCOUNT_SIZE = 165;
export const AMOUNT_OFFSET = 64;
export const SOL_DECIMALS = 9;

/** A Solana address is base58 of exactly 32 bytes (an ed25519 public key or a program-derived address). */
export function isAddress(s: string): boolean {
  if (s.length < 32 || s.length > 44) return false;
  try {
    return bs58.decode(s).length === 32;
  } catch {
    return false;
  }
}
