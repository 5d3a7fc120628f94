import { timingSafeEqual } from "node:crypto";
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
  given.write(provided, "hex");
  const canonical = canonicalString({ method: input.method, target: input.target, timestamp: input.timestamp, nonce: input.nonce, body: input.body });
  let ok = false;
  for (const secret of secrets) {
    if (timingSafeEqual(hmacSha256Into(secret, canonical), given)) ok = true;
  }
  return ok;
}

// HMAC-SHA256 (RFC 2104) over Bun's one-shot SHA-256, with the key's inner and outer pads prepared once per
// secret and every buffer reused: a verification allocates nothing native and nothing per call but the
// canonical string. Bun.CryptoHasher gives the same bytes, but a hasher object per request (a native object the
// GC must finalize) cost a signed GET about a tenth of its throughput in the server (bench/README.md). test/auth/
// signature.test.ts holds this to createHmac on random keys and messages. Verification is synchronous, so one
// set of buffers serves every request.
const BLOCK = 64;
const given = Buffer.alloc(32);
const innerDigest = Buffer.alloc(32);
const outerDigest = Buffer.alloc(32);
let scratch = Buffer.alloc(BLOCK + 4096);

interface Pads {
  inner: Buffer; // key XOR ipad (64 bytes)
  outer: Buffer; // key XOR opad (64 bytes), then room for the inner digest (32 bytes)
}
const padsBySecret = new Map<string, Pads>();
const PADS_MAX = 10_000;

function padsOf(secret: string): Pads {
  let pads = padsBySecret.get(secret);
  if (!pads) {
    let key = Buffer.from(secret, "utf8");
    if (key.length > BLOCK) key = Buffer.from(Bun.SHA256.hash(key) as Uint8Array);
    const inner = Buffer.alloc(BLOCK, 0x36);
    const outer = Buffer.alloc(BLOCK + 32, 0);
    outer.fill(0x5c, 0, BLOCK);
    for (let i = 0; i < key.length; i++) {
      inner[i]! ^= key[i]!;
      outer[i]! ^= key[i]!;
    }
    if (padsBySecret.size >= PADS_MAX) padsBySecret.clear();
    pads = { inner, outer };
    padsBySecret.set(secret, pads);
  }
  return pads;
}

/** HMAC-SHA256 of `message` (UTF-8) under `secret`. The returned buffer is reused: the next call overwrites it. */
export function hmacSha256Into(secret: string, message: string): Buffer {
  const pads = padsOf(secret);
  const needed = BLOCK + Buffer.byteLength(message, "utf8");
  if (scratch.length < needed) scratch = Buffer.alloc(needed * 2);
  pads.inner.copy(scratch, 0);
  const written = scratch.write(message, BLOCK, "utf8");
  Bun.SHA256.hash(scratch.subarray(0, BLOCK + written), innerDigest);
  innerDigest.copy(pads.outer, BLOCK);
  Bun.SHA256.hash(pads.outer, outerDigest);
  return outerDigest;
}
