import type { StoreErrorEvent } from '../resilience/events';
import type { OnStoreError } from '../resilience/on-store-error';
import type { MetricsSink } from '../limiter/metrics-sink';
import type { Store } from '../stores/store';
import type { ConcurrencyDecision, ConcurrencyStats } from './concurrency-decision';

export type {
  ConcurrencyDecision,
  ConcurrencyRefusal,
  ConcurrencyStats,
  Permit,
} from './concurrency-decision';

/**
 * Options of `createConcurrencyLimiter`: at most `max` requests in flight per key (nginx
 * `limit_conn`), in process memory or shared through Redis.
 */
export interface ConcurrencyLimiterOptions {
  /** Permits per key: requests that may be in flight at once. A whole number >= 1. */
  max: number;
  /**
   * Where permits live: an in-process store (the default `new MemoryStore()`) counts them in this
   * process; a `RedisStore` shares them between every instance, as leases (see `leaseMs`).
   * Limiters on one store with one `prefix` share their counts.
   *
   * On Redis, no process holds more than `max` permits of a key, whatever Redis forgets (a
   * restart without persistence, a failover to a replica that lagged, `FLUSHALL`, eviction): the
   * leases this process runs are counted here too, and renewed back into Redis until released.
   * Until that renewal (within `leaseMs / 3`), other instances may be admitted in their place:
   * after such a loss a key may hold up to twice `max` across instances, until the requests that
   * ran through it end.
   * @defaultValue `new MemoryStore()`
   */
  store?: Store;
  /** Namespace of the permits in the store (Redis: `<prefix>:{<key>}:permits`). @defaultValue `'sluice'` */
  prefix?: string;
  /**
   * The limiter's name: labels its metrics (`limiter="…"`). Printable ASCII, 1 to 128 characters.
   * @defaultValue the `prefix`
   */
  name?: string;
  /**
   * Where to report decisions and the in-flight and queued counts: `prometheus()` from
   * `@sluice/metrics` (gauges `sluice_in_flight{limiter}`, `sluice_queued{limiter}`), or your own sink.
   * @defaultValue none
   */
  metrics?: MetricsSink;
  /**
   * Shared stores (Redis): how long a permit lives unless renewed, in ms or a duration (`'30s'`).
   * A held permit is renewed every third of it, so a permit whose holder crashed (or lost Redis
   * for longer) comes back after at most this long. From 100 ms to one day.
   * @defaultValue 30000
   */
  leaseMs?: number | string;
  /**
   * Wait for a permit instead of being refused: in arrival order per key (FIFO), up to
   * `maxWaitMs`; a waiting client that leaves is dropped. At most `maxSize` requests wait at once
   * over all keys (default 1000), and `maxPerKey` for one key (default: `maxSize`); one more is
   * refused at once.
   * @defaultValue none: refuse at once
   */
  queue?: ConcurrencyQueueOptions;
  /**
   * Shared stores: what to do when the store fails or is slower than `timeoutMs`: an in-process
   * insurance count (default; `instances` divides `max`), `'fail-open'` (admit, uncounted) or
   * `'fail-closed'` (refuse, `reason: 'store-unavailable'`).
   * @defaultValue `{ insurance: new MemoryStore() }`
   */
  onStoreError?: OnStoreError;
  /** Shared stores: a call slower than this (ms) counts as a failure. Whole ms from 1 to 60000. @defaultValue 50 */
  timeoutMs?: number;
  /** `() => epoch ms` sent to the store as the leases' time (tests); without it Redis reads its `TIME`. */
  clock?: () => number;
}

/** `queue` of {@link ConcurrencyLimiterOptions}. */
export interface ConcurrencyQueueOptions {
  /** Longest wait for a permit: ms or a duration (`'2s'`), at most 10 minutes. */
  maxWaitMs: number | string;
  /** Most requests waiting at once, over all keys of the limiter. A whole number >= 1. @defaultValue 1000 */
  maxSize?: number;
  /**
   * Most requests waiting at once for one key, from 1 to `maxSize`: one more is refused at once
   * (`reason: 'queue-full'`), and the other keys' clients can still wait. Set it when the key is
   * a client (`$binary_remote_addr`, `$http_user_id`): without it, one client sending many
   * requests at once can fill the whole queue, and every other client that has to wait is
   * refused.
   * @defaultValue `maxSize` (no bound per key)
   */
  maxPerKey?: number;
}

/** Options of one `acquire`. */
export interface AcquireOptions {
  /** Aborting it drops the request from the queue (its client left): it resolves `reason: 'cancelled'`. */
  signal?: AbortSignal;
}

/** The events a concurrency limiter emits. */
export interface ConcurrencyEvents {
  /** A request got no permit. */
  limited: ConcurrencyDecision;
  /**
   * The store failed or was slower than `timeoutMs`; `mode` says how the request was decided
   * instead (for a failed release or renewal: how acquires are decided meanwhile — the release is
   * retried at the next renewal, and the lease expires by itself after `leaseMs` anyway).
   */
  storeError: StoreErrorEvent;
  /** The store answered again after failing. */
  storeRecovered: { readonly downMs: number; readonly failures: number };
  /**
   * A held permit's lease had lapsed in the store — Redis lost its data (a restart without
   * persistence, a failover to a replica that lagged, `FLUSHALL`, eviction) or was out of reach
   * longer than `leaseMs` — and its renewal took it back. Its request still runs and still
   * counts here; other instances may have been admitted in its place meanwhile, so the key may
   * hold more than `max` across instances until it ends (never more than `max` in this process).
   */
  leaseLost: { readonly key: string };
}

/** Name of a concurrency limiter event. */
export type ConcurrencyEventName = keyof ConcurrencyEvents;

/** Caps requests in flight per key. */
export interface ConcurrencyLimiter {
  /** Permits per key. */
  readonly max: number;
  /** The limiter's name (events, metrics). */
  readonly name: string;
  /** The store's namespace. */
  readonly prefix: string;
  /** Whether a `queue` is configured. */
  readonly queued: boolean;
  /**
   * Takes a permit for `key`, or waits for one with a `queue`. Release the permit when the
   * request ends, whatever happens (use `try … finally`).
   *
   * @param key - any string
   * @param options - a `signal` to stop waiting
   */
  acquire(key: string, options?: AcquireOptions): Promise<ConcurrencyDecision>;
  /**
   * The same without a promise when the answer is immediate: an in-process store, and either a
   * free permit or no queue. `undefined` otherwise (nothing was taken): call `acquire`.
   */
  acquireSync(key: string): ConcurrencyDecision | undefined;
  /**
   * Permits of `key` in use now in the store, every holder's (Redis: live leases). Rejects when
   * the store fails or does not answer within `timeoutMs`, or the `clock` breaks.
   */
  inFlight(key: string): Promise<number>;
  /** This process's counts: permits held and requests waiting. */
  stats(): ConcurrencyStats;
  on<E extends ConcurrencyEventName>(event: E, listener: (payload: ConcurrencyEvents[E]) => void): this;
  off<E extends ConcurrencyEventName>(event: E, listener: (payload: ConcurrencyEvents[E]) => void): this;
}
