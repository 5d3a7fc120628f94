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
    // Bun's native HMAC: the same bytes as node:crypto's createHmac, in under half the time.
    const expected = new Bun.CryptoHasher("sha256", secret).update(canonical).digest();
    if (timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}
