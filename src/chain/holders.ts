import type { AccountSink } from "../solana/scan-parser";

// The holders snapshot's arithmetic, fed one account at a time by the streaming scan: counts, an exact sum,
// and the ten largest accounts in a bounded min-heap. Nothing here grows with the number of accounts.

export const TOP_N = 10;
const TWO_32 = 4294967296;
/** lo and hi sums stay exact doubles for 2^21 accounts; flush to BigInt well before. */
const FLUSH_EVERY = 1 << 20;

interface Entry {
  hi: number;
  lo: number;
  address: string;
}

const less = (a: Entry, b: Entry) => a.hi < b.hi || (a.hi === b.hi && a.lo < b.lo);
const latin1 = new TextDecoder("latin1");

export type HolderTally = ReturnType<HolderAccumulator["result"]>;

export class HolderAccumulator {
  accounts = 0;
  holders = 0;
  private sumLo = 0;
  private sumHi = 0;
  private pending = 0;
  private total = 0n;
  private readonly heap: Entry[] = [];

  readonly sink: AccountSink = (pubkey, pubkeyLength, lo, hi) => {
    this.accounts++;
    if (lo === 0 && hi === 0) return; // an empty account is scanned but is not a holder
    this.holders++;
    this.sumLo += lo;
    this.sumHi += hi;
    if (++this.pending === FLUSH_EVERY) this.flush();
    const heap = this.heap;
    if (heap.length < TOP_N) {
      heap.push({ hi, lo, address: latin1.decode(pubkey.subarray(0, pubkeyLength)) });
      this.siftUp(heap.length - 1);
    } else if (hi > heap[0]!.hi || (hi === heap[0]!.hi && lo > heap[0]!.lo)) {
      // Only accounts that enter the top ten get their address decoded into a string.
      heap[0] = { hi, lo, address: latin1.decode(pubkey.subarray(0, pubkeyLength)) };
      this.siftDown(0);
    }
  };

  private flush(): void {
    this.total += BigInt(this.sumHi) * BigInt(TWO_32) + BigInt(this.sumLo);
    this.sumHi = 0;
    this.sumLo = 0;
    this.pending = 0;
  }

  private siftUp(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private siftDown(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && less(h[l]!, h[m]!)) m = l;
      if (r < h.length && less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }

  /** The tally; `top` largest first. */
  result() {
    this.flush();
    const top = [...this.heap]
      .sort((a, b) => (less(a, b) ? 1 : less(b, a) ? -1 : a.address < b.address ? -1 : 1))
      .map((e) => ({ address: e.address, amount: BigInt(e.hi) * BigInt(TWO_32) + BigInt(e.lo) }));
    return { accounts: this.accounts, holders: this.holders, total: this.total, top };
  }
}

/** Sum of the n largest (the list is largest first). */
export const topSum = (top: HolderTally["top"], n: number): bigint => top.slice(0, n).reduce((s, e) => s + e.amount, 0n);
