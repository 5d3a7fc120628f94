import { canonicalString } from "../client/sign";

/** The request target exactly as sent: path plus raw query, without re-encoding anything. */
export function requestTarget(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start === -1 ? "/" : url.slice(start);
}

/**
 * True when `provided` is the HMAC of the canonical string under any of `secrets`: 64 hex digits, either case
 * (it is the same value). The comparison is constant-time over the decoded bytes, and every secret is tried so
 * the time taken does not depend on which one matched.
 */
export function verifySignature(
  secrets: readonly string[],
  provided: string,
  input: { method: string; target: string; timestamp: string; nonce: string | null; body: Uint8Array | null },
): boolean {
  if (provided.length !== 64) return false;
  const canonical = canonicalString(input);
  let ok = false;
  for (let i = 0; i < secrets.length; i++) {
    if (hexSpellsDigest(provided, hmacSha256Into(secrets[i]!, canonical))) ok = true;
  }
  return ok;
}

// Hex digit → its value; every other code unit maps to 0xff, which no digest nibble can equal.
const HEX_VALUE = new Uint8Array(256).fill(0xff);
for (let i = 0; i < 10; i++) HEX_VALUE[48 + i] = i;
for (let i = 0; i < 6; i++) HEX_VALUE[65 + i] = HEX_VALUE[97 + i] = 10 + i;

/**
 * Whether 64 characters are the hex spelling (either case) of `digest`, in time that does not depend on where
 * they differ or which character is not a hex digit: every character is decoded and compared, the differences
 * OR-ed together, no early exit. One plain loop, instead of a format check and a decode into a buffer, keeps a
 * verification down to three calls into the runtime (write the message, two hashes).
 */
function hexSpellsDigest(hex: string, digest: Uint8Array): boolean {
  let bad = 0;
  for (let i = 0; i < 32; i++) {
    const c1 = hex.charCodeAt(2 * i);
    const c2 = hex.charCodeAt(2 * i + 1);
    const hi = HEX_VALUE[c1 & 0xff]!;
    const lo = HEX_VALUE[c2 & 0xff]!;
    // Not a digit: the value is 0xff (bits above the nibble); beyond Latin-1: the code unit's high byte.
    bad |= ((hi | lo) & 0xf0) | ((c1 | c2) & 0xff00) | (((hi << 4) | lo) ^ digest[i]!);
  }
  return bad === 0;
}

// HMAC-SHA256 (RFC 2104) over Bun's one-shot SHA-256. Each secret gets, once, a buffer that starts with its
// inner pad (the message is encoded right after it) and one that holds its outer pad (the inner digest is hashed
// straight into its tail), plus views of the lengths it has seen: a verification makes three native calls (write
// the message, two hashes) and allocates nothing once warm. Bun.CryptoHasher gives the same bytes, but a hasher
// object per request (a native object the GC must finalize) cost a signed GET about a tenth of its throughput in
// the server (bench/README.md). test/auth/signature.test.ts holds this to createHmac on random keys and messages.
// Verification is synchronous, so a secret's buffers are never in use twice at once.
const BLOCK = 64;
const INITIAL_MESSAGE_ROOM = 1024;
const outerDigest = Buffer.alloc(32);
const utf8 = new TextEncoder();

interface Pads {
  /** key XOR ipad (64 bytes), then room for the message. */
  inner: Buffer;
  /** `inner` after the pad: where the message is encoded. */
  innerTail: Uint8Array;
  /** Views of `inner` from 0, by length (pad + message bytes), made on first use. */
  innerViews: Buffer[];
  /** key XOR opad (64 bytes), then the inner digest (32 bytes). */
  outer: Buffer;
  /** The last 32 bytes of `outer`: where the inner digest is written. */
  outerTail: Buffer;
}
const padsBySecret = new Map<string, Pads>();
const PADS_MAX = 1_000;

function padsOf(secret: string): Pads {
  let pads = padsBySecret.get(secret);
  if (!pads) {
    let key = Buffer.from(secret, "utf8");
    if (key.length > BLOCK) key = Buffer.from(Bun.SHA256.hash(key) as Uint8Array);
    const inner = Buffer.alloc(BLOCK + INITIAL_MESSAGE_ROOM);
    inner.fill(0x36, 0, BLOCK);
    const outer = Buffer.alloc(BLOCK + 32);
    outer.fill(0x5c, 0, BLOCK);
    for (let i = 0; i < key.length; i++) {
      inner[i]! ^= key[i]!;
      outer[i]! ^= key[i]!;
    }
    if (padsBySecret.size >= PADS_MAX) padsBySecret.clear();
    pads = { inner, innerTail: inner.subarray(BLOCK), innerViews: [], outer, outerTail: outer.subarray(BLOCK) };
    padsBySecret.set(secret, pads);
  }
  return pads;
}

/** HMAC-SHA256 of `message` (UTF-8) under `secret`. The returned buffer is reused: the next call overwrites it. */
export function hmacSha256Into(secret: string, message: string): Buffer {
  const pads = padsOf(secret);
  // A UTF-16 code unit never takes more than 3 bytes in UTF-8, so this room always holds the message.
  if (pads.inner.length < BLOCK + message.length * 3) {
    const grown = Buffer.alloc(BLOCK + message.length * 6);
    pads.inner.copy(grown, 0, 0, BLOCK);
    pads.inner = grown;
    pads.innerTail = grown.subarray(BLOCK);
    pads.innerViews = [];
  }
  const length = BLOCK + utf8.encodeInto(message, pads.innerTail).written;
  const view = (pads.innerViews[length] ??= pads.inner.subarray(0, length));
  Bun.SHA256.hash(view, pads.outerTail);
  Bun.SHA256.hash(pads.outer, outerDigest);
  return outerDigest;
}
