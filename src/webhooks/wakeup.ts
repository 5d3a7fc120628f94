/**
 * One waiter woken in O(1): the dispatcher's pass, woken when a send or a lease finishes or new work is committed.
 * It replaced a `Promise.race` over every send in flight made again at each round, which left a reaction on each of
 * those promises per round (~16 a delivery at WEBHOOK_CONCURRENCY 16), all run when it settled.
 */
export class Wakeup {
  private wake: (() => void) | null = null;
  /** A poke came while nobody waited: the next wait returns at once. */
  private poked = false;

  readonly poke = (): void => {
    const wake = this.wake;
    if (wake) {
      this.wake = null;
      wake();
    } else this.poked = true;
  };

  /** Resolves at the next poke, or at once when one came since the last wait. */
  wait(): Promise<void> {
    if (this.poked) {
      this.poked = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => (this.wake = resolve));
  }
}
