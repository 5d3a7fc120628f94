/** Lower-case RFC 4648 base32 without padding: case-insensitive in print, URL-safe, no ambiguous symbols. */
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** Encodes random bytes as base32 — the one encoder for Herald's unguessable codes (claims, short links). */
export function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = ((value << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}
