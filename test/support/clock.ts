import { createHash } from "node:crypto";
import type { Clock, Rng } from "../../src/clock";

/** A clock tests move by hand: time-dependent logic is driven by this, never by sleeping. */
export class FakeClock implements Clock {
  private ms: number;
  constructor(start: string | Date = "2026-01-01T00:00:00.000Z") {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  advanceSeconds(s: number): void {
    this.ms += s * 1000;
  }
  set(iso: string | Date): void {
    this.ms = new Date(iso).getTime();
  }
}

/** Deterministic bytes: sha256(seed:counter) blocks. Same seed, same sequence. */
export function seededRng(seed = "herald-test"): Rng {
  let counter = 0;
  return {
    bytes(n: number): Uint8Array {
      const out = new Uint8Array(n);
      let filled = 0;
      while (filled < n) {
        const block = createHash("sha256").update(`${seed}:${counter++}`).digest();
        const take = Math.min(block.length, n - filled);
        out.set(block.subarray(0, take), filled);
        filled += take;
      }
      return out;
    },
  };
}
