/**
 * Stops asking a failing store for a while. Closed: every request goes to the store. After
 * `threshold` consecutive failures it opens for `cooldownMs`: no request goes to the store.
 * Then it half-opens: exactly one request (the probe) goes to the store; success closes it,
 * failure opens it again. With a cooldown well under a second, a store that comes back is used
 * again within a second, and a dead one costs one timed-out probe per cooldown.
 *
 * It counts what the guard tells it, and the guard tells it only of the store's own failures:
 * an error about one key's data is an answer ({@link CircuitBreaker.succeeded}), and a reply
 * that was waiting while the event loop was blocked is read before any timeout is declared, so
 * neither a bad key nor a busy process can open the circuit for every key.
 */
export class CircuitBreaker {
  #failures = 0;
  #openUntil = 0;
  #probing = false;
  /** When a probe that never reported back stops holding the others off. */
  #probeUntil = 0;
  #firstFailureAt = 0;
  /** When requests last asked while it was open. */
  #askedAt = 0;

  readonly #clock: () => number;

  /**
   * @param now - the limiter's clock (its `clock` option, or `Date.now`). One that throws or
   *   returns no finite number is read as `Date.now()` here: the circuit is asked from timers and
   *   close listeners (renewals, releases), where a throw would end the process; the requests
   *   themselves reject, naming the `clock`.
   * @param probeLapseMs - how long a probe that never reported back (its key's node changed on
   *   Cluster meanwhile, say) keeps the next one waiting
   */
  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
    now: () => number,
    private readonly probeLapseMs = Infinity,
  ) {
    this.#clock = now;
  }

  #now(): number {
    try {
      const ms = this.#clock();
      if (Number.isFinite(ms)) return ms;
    } catch {
      // Below: the process's own clock.
    }
    return Date.now();
  }

  /** Whether the next request may go to the store; when half-open, only the first caller gets true. */
  allow(): boolean {
    if (this.#failures < this.threshold) return true;
    const now = this.#now();
    this.#askedAt = now;
    if (now < this.#openUntil || (this.#probing && now < this.#probeUntil)) return false;
    this.#probing = true;
    this.#probeUntil = now + this.probeLapseMs;
    return true;
  }

  /** Whether the circuit is closed: every request goes to the store, no probe is pending. */
  allowsAll(): boolean {
    return this.#failures < this.threshold;
  }

  /** Ms until the store will be tried again (0 when closed). */
  retryInMs(): number {
    return this.#failures < this.threshold ? 0 : Math.max(0, this.#openUntil - this.#now());
  }

  /**
   * Whether it is open and requests asked for it in the last `withinMs`: a store (or node) that
   * is down and still wanted, not one nothing reaches any more (a Cluster master replaced).
   */
  openAndAsked(withinMs: number): boolean {
    return this.#failures >= this.threshold && this.#now() - this.#askedAt < withinMs;
  }

  /** Whether it has no failure counted: nothing to remember. */
  idle(): boolean {
    return this.#failures === 0;
  }

  /** Records a success; returns the outage it ends, if any. */
  succeeded(): { downMs: number; failures: number } | undefined {
    const failures = this.#failures;
    this.#failures = 0;
    this.#probing = false;
    return failures === 0 ? undefined : { downMs: Math.max(0, this.#now() - this.#firstFailureAt), failures };
  }

  failed(): void {
    if (this.#failures === 0) this.#firstFailureAt = this.#now();
    this.#failures++;
    this.#probing = false;
    if (this.#failures < this.threshold) return;
    const now = this.#now();
    this.#openUntil = now + this.cooldownMs;
    this.#askedAt = now;
  }
}
