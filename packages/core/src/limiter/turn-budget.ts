/**
 * The time a request with several limits may wait for its stores in all when its limits are
 * taken in turn (see `consumeAll`): one `timeoutMs` from when it was asked, shared by every
 * limit's turn and the give-backs after a refusal, not one per limit. A limit whose turn comes
 * with no time left, or whose store does not answer within what is left, is decided by its
 * `onStoreError`; what its store then takes late is given back.
 */
export class TurnBudget {
  readonly #until: number;

  /** @param timeoutMs - the time in all, from now */
  constructor(timeoutMs: number) {
    this.#until = performance.now() + timeoutMs;
  }

  /** Whole ms left, 0 once spent. */
  left(): number {
    return Math.max(0, Math.floor(this.#until - performance.now()));
  }

  /**
   * What `pending` gives when it settles within the time left; else `late()`'s answer, and what
   * `pending` gives afterwards goes to `after` (a late admission's give-back). As a store's own
   * bound (see `DeadlineList`), the time is up one turn of the event loop after the timer, so a
   * reply that came while this process was busy is read first.
   */
  within<T>(pending: Promise<T>, late: () => T | Promise<T>, after?: (value: T) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        setImmediate(() => {
          if (settled) return;
          settled = true;
          Promise.resolve().then(late).then(resolve, reject);
        });
      }, this.left());
      pending.then(
        (value) => {
          if (settled) {
            try {
              after?.(value);
            } catch {
              // A give-back that throws has reported itself (see refundAll): nothing to tell here.
            }
            return;
          }
          settled = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}
