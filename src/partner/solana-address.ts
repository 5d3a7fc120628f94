import bs58 from "bs58";

/** A Solana address is base58 of exactly 32 bytes (an ed25519 public key or a program-derived address). */
export function isSolanaAddress(s: string): boolean {
  if (s.length < 32 || s.length > 44) return false;
  try {
    return bs58.decode(s).length === 32;
  } catch {
    return false;
  }
}
