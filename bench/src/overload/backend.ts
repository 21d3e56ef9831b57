interface Waiter {
  readonly gone: () => boolean;
  readonly resolve: (done: boolean) => void;
}

/**
 * A simulated backend of fixed capacity: `slots` requests at a time, each holding its slot for
 * `serviceMs`; the others wait their turn in order (FIFO), so its latency grows with its queue,
 * as a database's connection pool does. `slots` can change while it runs (the capacity halving).
 */
export class Backend {
  #busy = 0;
  readonly #queue: Waiter[] = [];

  constructor(
    public slots: number,
    readonly serviceMs: number,
  ) {}

  /**
   * Waits for a slot, holds it `serviceMs`, gives it back. A request whose client has gone by
   * its turn gives its turn up (a server that checks before querying): without that, a backlog
   * would outlive the run that made it.
   *
   * @returns whether the work was done
   */
  run(gone: () => boolean): Promise<boolean> {
    return new Promise((resolve) => {
      this.#queue.push({ gone, resolve });
      this.#next();
    });
  }

  /** Requests waiting or in service. */
  get load(): number {
    return this.#busy + this.#queue.length;
  }

  /** Changes the slots; a rise starts waiting requests at once. */
  resize(slots: number): void {
    this.slots = slots;
    this.#next();
  }

  #next(): void {
    while (this.#busy < this.slots && this.#queue.length > 0) {
      const waiter = this.#queue.shift() as Waiter;
      if (waiter.gone()) {
        waiter.resolve(false);
        continue;
      }
      this.#busy++;
      setTimeout(() => {
        this.#busy--;
        this.#next();
        waiter.resolve(true);
      }, this.serviceMs);
    }
  }
}
