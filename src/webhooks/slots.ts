/** A counting semaphore: bounds work in flight, globally and per receiver host. */
export class Slots {
  private waiting: Array<() => void> = [];
  private used = 0;
  constructor(private readonly size: number) {}
  /** Resolves once a slot is this caller's. */
  async take(): Promise<void> {
    if (this.used < this.size) {
      this.used++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.used--;
  }
}
