import { createHash } from "node:crypto";
import bs58 from "bs58";

// Deterministic addresses for the Solana fixture (dev-rpc and the tests). A million holders means a million
// addresses per scan, so derivation must be cheap: a 32-bit mixer instead of a hash per key, and a base58
// encoder specialised for 32 bytes. The last four bytes carry the index (masked), so an address maps back to its
// index without a lookup table: getTokenAccountsByOwner on any fixture owner is O(1) at any holder count.

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const ALPHABET_CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const B58_5 = 58 ** 5;

const limbs = new Float64Array(16);
const digits = new Uint8Array(48);

/**
 * Base58 of 32 bytes: 16-bit limbs, five digits per long division so every intermediate value stays an exact
 * double. Writes ASCII into `out` at `at` and returns the length (used directly by the fixture's JSON writer).
 */
export function base58Into(bytes: Uint8Array, out: Uint8Array, at: number): number {
  for (let i = 0; i < 16; i++) limbs[i] = (bytes[2 * i]! << 8) | bytes[2 * i + 1]!;
  let n = 0;
  let start = 0;
  while (start < 16 && limbs[start] === 0) start++;
  while (start < 16) {
    let rem = 0;
    for (let i = start; i < 16; i++) {
      const cur = rem * 65536 + limbs[i]!;
      const q = Math.floor(cur / B58_5);
      rem = cur - q * B58_5;
      limbs[i] = q;
    }
    while (start < 16 && limbs[start] === 0) start++;
    for (let k = 0; k < 5; k++) {
      const q = Math.floor(rem / 58);
      digits[n++] = rem - q * 58;
      rem = q;
    }
  }
  while (n > 0 && digits[n - 1] === 0) n--;
  let len = 0;
  for (let z = 0; z < 32 && bytes[z] === 0; z++) out[at + len++] = 49; // "1" per leading zero byte
  for (let i = n - 1; i >= 0; i--) out[at + len++] = ALPHABET_CODES[digits[i]!]!;
  return len;
}

const scratch = new Uint8Array(64);
const latin1 = new TextDecoder("latin1");

export function base58Of32(bytes: Uint8Array): string {
  const len = base58Into(bytes, scratch, 0);
  return latin1.decode(scratch.subarray(0, len));
}

/** A 32-bit integer mixer (murmur3 finaliser): cheap, well spread, deterministic. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

export function seedHash(seed: string): number {
  return createHash("sha256").update(seed).digest().readUInt32BE(0);
}

/** Domains keep the key spaces apart: a holder's owner never equals its token account or another holder. */
export const KeyDomain = {
  mint: 1,
  lpMint: 2,
  treasuryOwner: 3,
  reserveOwner: 4,
  holderOwner: 5,
  holderAccount: 6,
  walletAccount: 7,
  authority: 8,
  lpAccount: 9,
  signature: 10,
  lpOwner: 11,
} as const;
export type KeyDomainId = (typeof KeyDomain)[keyof typeof KeyDomain];

export class FixtureKeys {
  private readonly buf = new Uint8Array(32);
  private readonly view = new DataView(this.buf.buffer);

  constructor(private readonly seed: number) {}

  private mask(domain: number): number {
    return mix32(this.seed ^ Math.imul(domain, 0x9e3779b1));
  }

  /** Fills the reused buffer with key (domain, index); callers copy what they keep. */
  bytes(domain: KeyDomainId, index: number): Uint8Array {
    let state = mix32(this.seed ^ Math.imul(domain + 1, 0x27d4eb2f) ^ Math.imul(index + 1, 0x165667b1));
    for (let w = 0; w < 7; w++) {
      state = mix32(state + 0x6d2b79f5);
      this.view.setUint32(w * 4, state);
    }
    this.view.setUint32(28, (index ^ this.mask(domain)) >>> 0);
    return this.buf;
  }

  address(domain: KeyDomainId, index: number): string {
    return base58Of32(this.bytes(domain, index));
  }

  /** The index of a fixture address in a domain, or null if the address is not one of its keys. */
  indexOf(domain: KeyDomainId, address: string): number | null {
    let decoded: Uint8Array;
    try {
      decoded = bs58.decode(address);
    } catch {
      return null;
    }
    if (decoded.length !== 32) return null;
    const index = (new DataView(decoded.buffer, decoded.byteOffset, 32).getUint32(28) ^ this.mask(domain)) >>> 0;
    const expected = this.bytes(domain, index);
    for (let i = 0; i < 32; i++) if (expected[i] !== decoded[i]) return null;
    return index;
  }
}

/** 64 bytes of a deterministic transaction signature, base58 (88 characters or so). */
export function signatureOf(seed: number, index: number): string {
  const out = new Uint8Array(64);
  const view = new DataView(out.buffer);
  let state = mix32(seed ^ Math.imul(index + 7, 0x2545f491));
  for (let w = 0; w < 16; w++) {
    state = mix32(state + 0x6d2b79f5 + w);
    view.setUint32(w * 4, state);
  }
  return bs58.encode(out);
}
