/**
 * What a concurrency limiter answers and counts: apart from its options, so that the metrics
 * sink can name them without importing the options (which name the sink).
 */

/**
 * Why a request got no permit: `'limited'` (every permit of the key is in use, and no queue),
 * `'queue-full'` (the queue holds `maxSize` already, or `maxPerKey` for the key),
 * `'queue-timeout'` (no permit within `maxWaitMs`), `'cancelled'` (its `signal` aborted while it
 * waited: the client left), or `'store-unavailable'` (the store failed and `onStoreError` is
 * `'fail-closed'`).
 */
export type ConcurrencyRefusal =
  'limited' | 'queue-full' | 'queue-timeout' | 'cancelled' | 'store-unavailable';

/** A permit: give it back with `release()` when the request ends. */
export interface Permit {
  /** The key it was taken for. */
  readonly key: string;
  /** `true` once released. */
  readonly released: boolean;
  /**
   * Gives the permit back, once: later calls do nothing. Resolves when the store has been told
   * (memory: at once); never rejects — a shared store that cannot be told lets the lease expire
   * after `leaseMs` (and the call is retried meanwhile), so a permit is never lost. Until then it
   * counts: a held permit's lease is renewed, and taken back if the store lost it.
   */
  release(): Promise<void>;
}

/** The answer to `acquire`. Being refused is a normal answer, never a rejected promise. */
export interface ConcurrencyDecision {
  readonly allowed: boolean;
  /** The permit, when allowed: release it when the request ends. */
  readonly permit?: Permit;
  /** The key, as given. */
  readonly key: string;
  /** Permits per key (`max`). */
  readonly max: number;
  /** Permits of the key in use after this decision, as the store counted them (every instance's, on Redis). */
  readonly inFlight: number;
  /**
   * Ms after which a retry may find a permit: an estimate from how long permits are held and the
   * queue ahead, given only with a `queue` (which measures it) and once known; else 0.
   */
  readonly retryAfterMs: number;
  /** Ms this request waited in the queue (0 without one). */
  readonly waitedMs: number;
  /** Set when refused. */
  readonly reason?: ConcurrencyRefusal;
  /** Set when the store could not decide and `onStoreError` did (see `Decision.degraded`). */
  readonly degraded?: 'fail-open' | 'fail-closed' | 'insurance';
}

/** Counts of one limiter in this process, for gauges (in flight, queued). */
export interface ConcurrencyStats {
  /** Permits this process holds now (not yet released). */
  readonly inFlight: number;
  /** Requests waiting in this process's queue now. */
  readonly queued: number;
}
