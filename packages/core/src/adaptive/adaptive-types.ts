import type { MetricsSink } from '../limiter/metrics-sink';
import type { AdaptiveAlgorithmName } from './algorithms';
import type { EventLoopMonitor } from './event-loop-lag';
import type { AdaptiveDecision, AdaptiveStats } from './adaptive-decision';

export type {
  AdaptiveDecision,
  AdaptivePartitionStats,
  AdaptivePermit,
  AdaptiveRefusal,
  AdaptiveReleaseOptions,
  AdaptiveStats,
} from './adaptive-decision';

/**
 * Options of `createAdaptiveLimiter`: how many requests this instance runs at once, a number it
 * finds itself from the latency it measures.
 */
export interface AdaptiveLimiterOptions {
  /**
   * How the limit follows latency: `'vegas'` (the default, see `createAdaptiveLimiter`),
   * `'gradient2'`, or `'aimd'` (backs off only on drops and 5 s latencies), as in Netflix's
   * concurrency-limits.
   * @defaultValue `'vegas'`
   */
  algorithm?: AdaptiveAlgorithmName;
  /** The limit before any measurement: requests in flight. A whole number from `min` to `max`. @defaultValue 20 */
  initial?: number;
  /** The lowest limit, whatever latency and the event loop say. A whole number >= 1. @defaultValue 1 */
  min?: number;
  /** The highest limit. A whole number >= `min`. @defaultValue 1000 */
  max?: number;
  /**
   * Guaranteed shares of the limit by partition (`acquire(partition)`), each in (0, 1], summing
   * to at most 1: under overload each partition keeps at least its share in flight; capacity a
   * partition leaves unused is lent to the others until it asks for it again (but for room to
   * grow by half of what it has in flight, kept while it is in use). A partition name not
   * listed (or none) is the partition `'*'`, guaranteed what the shares leave (`1 − their sum`,
   * possibly nothing) and borrowing like any other. At most 32 names.
   * @defaultValue none: one partition `'*'` with the whole limit
   */
  shares?: Readonly<Record<string, number>>;
  /**
   * A short queue above the limit, or `false` to refuse at once. Waiters leave in arrival order,
   * or newest first once the queue has stood non-empty longer than `targetMs` (overload): then
   * new arrivals that find no free permit are refused at once, and waiters older than `targetMs`
   * are refused, so refusals stay fast.
   * @defaultValue `{ maxSize: 100, maxWaitMs: 50, targetMs: 5 }`
   */
  queue?: AdaptiveQueueOptions | false;
  /**
   * Watching the event loop: when its delay (the p99 over the last `sampleMs`) exceeds
   * `maxDelayMs`, the limit is halved at once (down to `min`), at most once a window and only
   * while at least half of it is in flight (under that, the lag is not its requests' doing);
   * `false` to not watch. The timer is unref'd, and stopped by `close()`.
   * @defaultValue `{ maxDelayMs: 50, sampleMs: 100 }` (Node's `perf_hooks.monitorEventLoopDelay`)
   */
  eventLoop?: AdaptiveEventLoopOptions | false;
  /** The window of latency samples the algorithm sees as one: at least this long (ms) and 10 requests (2 once 3 × this passed). From 1 to 60000. @defaultValue 100 */
  windowMs?: number;
  /** The limiter's name: labels its metrics (`limiter="…"`). Printable ASCII, 1 to 128 characters. @defaultValue `'adaptive'` */
  name?: string;
  /**
   * Where to report: `prometheus()` from `@sluice/metrics` (gauges `sluice_adaptive_limit`,
   * `sluice_in_flight`, `sluice_queued` and the counter `sluice_shed_total`, per partition), or your own sink.
   * @defaultValue none
   */
  metrics?: MetricsSink;
  /** `() => ms` for latencies and waits (tests); monotonic. @defaultValue `performance.now` */
  clock?: () => number;
}

/** `queue` of {@link AdaptiveLimiterOptions}. */
export interface AdaptiveQueueOptions {
  /** Most requests waiting at once, over all partitions. A whole number >= 1. @defaultValue 100 */
  maxSize?: number;
  /** Longest wait for a permit (ms), from 1 to 60000. @defaultValue 50 */
  maxWaitMs?: number;
  /**
   * A queue that has stood non-empty longer than this (ms) is overload (CoDel's target): arrivals
   * without a free permit are refused at once, waiters leave newest first, and a waiter is
   * refused as soon as it has waited longer than this. From 1 to `maxWaitMs`. @defaultValue 5
   */
  targetMs?: number;
}

/** `eventLoop` of {@link AdaptiveLimiterOptions}. */
export interface AdaptiveEventLoopOptions {
  /** Event-loop delay (ms, p99 of a sample) above which the limit is halved. From 1 to 60000. @defaultValue 50 */
  maxDelayMs?: number;
  /** How often the delay is read (ms). From 10 to 60000. @defaultValue 100 */
  sampleMs?: number;
  /**
   * Where delays come from (tests): called once with a listener of each sample's delay (ms);
   * returns what stops it. @defaultValue `perf_hooks.monitorEventLoopDelay` read every `sampleMs`
   */
  monitor?: EventLoopMonitor;
}

/** Options of one `acquire`. */
export interface AdaptiveAcquireOptions {
  /** Aborting it takes a waiting request out of the queue (its client left): `reason: 'cancelled'`. */
  signal?: AbortSignal;
  /**
   * Try the limit out: a request over it gets a permit anyway (counted in flight and measured, so
   * the limit still adapts), in a decision that is otherwise the refusal it would have been
   * (`allowed: false`, `reason`); it never waits (one that would have waited is admitted).
   * @defaultValue false
   */
  dryRun?: boolean;
}

/** Caps requests in flight in this instance at a limit that follows latency. */
export interface AdaptiveLimiter {
  /** The limiter's name (metrics). */
  readonly name: string;
  /**
   * Takes a permit for `partition`: the decision at once when it can be had (a free permit, or a
   * refusal), a promise when the request waits in the queue. Release the permit when the request
   * ends, whatever happens.
   *
   * @param partition - a name of `shares` (others, and none, are `'*'`)
   * @param options - a `signal` to stop waiting
   */
  acquire(partition?: string, options?: AdaptiveAcquireOptions): AdaptiveDecision | Promise<AdaptiveDecision>;
  /**
   * The same when the answer is immediate (a free permit, or a refusal); `undefined` when the
   * request would wait in the queue (nothing was taken): call `acquire`.
   */
  acquireSync(
    partition?: string,
    options?: Omit<AdaptiveAcquireOptions, 'signal'>,
  ): AdaptiveDecision | undefined;
  /** The limit now (requests in flight, all partitions). */
  limit(): number;
  /** Requests in flight now, all partitions. */
  inFlight(): number;
  /** Counts now, by partition. */
  stats(): AdaptiveStats;
  /** Stops watching the event loop and refuses every waiter (`'cancelled'`). Permits in flight still release. */
  close(): void;
}
