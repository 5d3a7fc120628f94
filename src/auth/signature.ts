import { canonicalString } from "../client/sign";

const SIGNATURE_FORMAT = /^[0-9a-fA-F]{64}$/;

/** The request target exactly as sent: path plus raw query, without re-encoding anything. */
export function requestTarget(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start === -1 ? "/" : url.slice(start);
}

/**
 * True when `provided` is the HMAC of the canonical string under any of `secrets`. Hex case is ignored (it is
 * the same value); the comparison is constant-time over the decoded bytes, and every secret is tried so the
 * time taken does not depend on which one matched.
 */
export function verifySignature(
  secrets: readonly string[],
  provided: string,
  input: { method: string; target: string; timestamp: string; nonce: string | null; body: Uint8Array | null },
): boolean {
  if (!SIGNATURE_FORMAT.test(provided)) return false;
  const canonical = canonicalString(input);
  let ok = false;
  for (const secret of secrets) {
    if (hexEqualsDigest(provided, hmacSha256Into(secret, canonical))) ok = true;
  }
  return ok;
}

// Hex digit → value, for both cases (every other code is never looked up: SIGNATURE_FORMAT has been checked).
const HEX_VALUE = new Uint8Array(128);
for (let i = 0; i < 10; i++) HEX_VALUE[48 + i] = i;
for (let i = 0; i < 6; i++) HEX_VALUE[65 + i] = HEX_VALUE[97 + i] = 10 + i;

/**
 * Whether 64 hex characters spell `digest`, in time that does not depend on where they differ: every byte is
 * decoded and compared, the differences OR-ed together, no early exit. Plain JavaScript, so a verification
 * crosses into native code only to write the message and hash it.
 */
function hexEqualsDigest(hex: string, digest: Uint8Array): boolean {
  let diff = 0;
  for (let i = 0; i < 32; i++) {
    diff |= ((HEX_VALUE[hex.charCodeAt(2 * i)]! << 4) | HEX_VALUE[hex.charCodeAt(2 * i + 1)]!) ^ digest[i]!;
  }
  return diff === 0;
}

// HMAC-SHA256 (RFC 2104) over Bun's one-shot SHA-256. Each secret gets, once, a buffer that starts with its
// inner pad (the message is written right after it) and one that holds its outer pad (the inner digest is hashed
// straight into its tail), plus views of the lengths it has seen: a verification makes three native calls (write
// the message, two hashes) and allocates nothing once warm. Bun.CryptoHasher gives the same bytes, but a hasher
// object per request (a native object the GC must finalize) cost a signed GET about a tenth of its throughput in
// the server (bench/README.md). test/auth/signature.test.ts holds this to createHmac on random keys and messages.
// Verification is synchronous, so a secret's buffers are never in use twice at once.
const BLOCK = 64;
const INITIAL_MESSAGE_ROOM = 1024;
const outerDigest = Buffer.alloc(32);

interface Pads {
  /** key XOR ipad (64 bytes), then room for the message. */
  inner: Buffer;
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
    pads = { inner, innerViews: [], outer, outerTail: outer.subarray(BLOCK) };
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
    pads.innerViews = [];
  }
  const length = BLOCK + pads.inner.write(message, BLOCK, "utf8");
  const view = (pads.innerViews[length] ??= pads.inner.subarray(0, length));
  Bun.SHA256.hash(view, pads.outerTail);
  Bun.SHA256.hash(pads.outer, outerDigest);
  return outerDigest;
}
