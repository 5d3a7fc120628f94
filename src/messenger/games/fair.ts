// Provably fair draws (docs/messenger.md, "Provably fair"). Every outcome is a pure function of
// (server_seed, client_seed, nonce): the server commits to sha256(server_seed) before play and reveals the seed
// later, so a player can recompute every result and see that the server could not choose it after the fact.
import { createHash, createHmac } from "node:crypto";
import type { Rng } from "../../clock";

export const newServerSeed = (rng: Rng): string => Buffer.from(rng.bytes(32)).toString("hex");

/** The commitment shown before play: hex(SHA-256(the seed's 64 hex characters as ASCII)). */
export const seedHash = (serverSeed: string): string => createHash("sha256").update(serverSeed).digest("hex");

/** A default client seed for a player who has not chosen one. */
export const newClientSeed = (rng: Rng): string => Buffer.from(rng.bytes(8)).toString("hex");

/**
 * An integer uniform in [0, n): HMAC-SHA256(key = server_seed, message = "client_seed:nonce:cursor"), the first
 * 13 hex digits (52 bits) as x, result floor(x · n / 2^52). n is at most 2^20 here, so the bias is below 2^-32.
 */
export function fairInt(serverSeed: string, clientSeed: string, nonce: number, cursor: number, n: number): number {
  const digest = createHmac("sha256", serverSeed).update(`${clientSeed}:${nonce}:${cursor}`).digest("hex");
  const x = BigInt(`0x${digest.slice(0, 13)}`);
  return Number((x * BigInt(n)) >> 52n);
}

/** The index of the weighted segment for one spin: r = fairInt(…, cursor 0, total weight); first cumulative weight above r. */
export function pickWeighted(weights: readonly number[], serverSeed: string, clientSeed: string, nonce: number): number {
  const total = weights.reduce((a, b) => a + b, 0);
  const r = fairInt(serverSeed, clientSeed, nonce, 0, total);
  let acc = 0;
  for (let i = 0; i < weights.length; i++) {
    acc += weights[i]!;
    if (r < acc) return i;
  }
  return weights.length - 1;
}

/** A grid layout: Fisher–Yates over `cells`, for i from n-1 down to 1, j = fairInt(…, cursor i, i + 1), swap i and j. */
export function shuffleFair<T>(cells: readonly T[], serverSeed: string, clientSeed: string, nonce: number): T[] {
  const out = [...cells];
  for (let i = out.length - 1; i >= 1; i--) {
    const j = fairInt(serverSeed, clientSeed, nonce, i, i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
