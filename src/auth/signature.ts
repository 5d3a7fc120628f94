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
  const given = Buffer.from(provided, "hex");
  const canonical = canonicalString({ method: input.method, target: input.target, timestamp: input.timestamp, nonce: input.nonce, body: input.body });
  let ok = false;
  for (const secret of secrets) {
    if (timingSafeEqual(hmacOf(secret, canonical), given)) ok = true;
  }
  return ok;
}

// Bun's native HMAC (the same bytes as node:crypto's createHmac in under half the time), keyed once per secret
// and copied per request, so a request pays for hashing its canonical string and nothing else.
const keyedHashers = new Map<string, Bun.CryptoHasher>();
const KEYED_HASHERS_MAX = 10_000;

function hmacOf(secret: string, message: string): Buffer {
  let keyed = keyedHashers.get(secret);
  if (!keyed) {
    if (keyedHashers.size >= KEYED_HASHERS_MAX) keyedHashers.clear();
    keyed = new Bun.CryptoHasher("sha256", secret);
    keyedHashers.set(secret, keyed);
  }
  return keyed.copy().update(message).digest();
}
