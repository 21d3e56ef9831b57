import type { LimiterMetrics } from '../limiter/metrics-sink';
import { LIMIT_ALGORITHMS } from './algorithms';
import type {
  AdaptiveAcquireOptions,
  AdaptiveDecision,
  AdaptiveLimiter,
  AdaptiveLimiterOptions,
  AdaptivePartitionStats,
  AdaptivePermit,
  AdaptiveRefusal,
  AdaptiveReleaseOptions,
  AdaptiveStats,
} from './adaptive-types';
import type { LimitAlgorithm, LimitState } from './limit-algorithm';
import { Partitions, WANTS_MS, type Partition } from './partitions';
import { resolveAdaptiveOptions } from './resolve-adaptive-options';
import { SampleWindow } from './sample-window';
import { Waiters, type Waiter } from './waiters';

/** `retryAfterMs` before any latency is measured. */
const UNMEASURED_RETRY_MS = 1000;

/**
 * Creates a limiter of requests in flight in this instance whose limit follows the latency it
 * measures: no number picked by hand. Each released permit is a latency sample (acquire to
 * release); every window of samples (`windowMs`, at least 10, or fewer over 3 × `windowMs`)
 * moves the limit by the `algorithm`; a lagging event loop halves it at once (at most once a
 * window, and not while under half of it is in flight); `min` and `max` bound it. Above the limit
 * a request waits in a short queue (newest first under overload) or is refused with a
 * `retryAfterMs` estimate; `shares` keep each partition its part under overload.
 *
 * **Why Vegas is the default.** Each algorithm ran against a simulated backend of fixed
 * capacity (20 slots of 10 ms ± 10 %, a FIFO queue behind them: latency grows with the queue),
 * Poisson clients at 1×, 3× and 10× its capacity, no queue in the limiter, 30 simulated seconds
 * of which the last 22.5 measured (`packages/core/test/adaptive/backend-simulation.test.ts`):
 *
 * | algorithm | load | throughput | p50 | p99 | mean limit |
 * | --- | --- | --- | --- | --- | --- |
 * | vegas | 1× | 0.964 | 12.3 ms | 17.3 ms | 32.4 |
 * | vegas | 3× | 0.998 | 13.2 ms | 16.1 ms | 26.9 |
 * | vegas | 10× | 0.998 | 13.4 ms | 16.2 ms | 26.9 |
 * | gradient2 | 3× | 1.000 | 22.2 ms | 29.2 ms | 46.0 (67.1 after 60 s) |
 * | aimd | 3× | 1.005 | 102 ms | 157 ms | 205 |
 *
 * Vegas holds the limit a few requests above the backend's 20 slots at any overload, so the
 * requests it admits keep a latency close to the bare 10 ms, at 99 % of the capacity. Gradient2
 * lets latency reach 1.5× its long-run mean, and under sustained overload that mean follows the
 * latency up: its limit creeps (46 after 30 s, 67 after 60 s) and admitted requests queue at the
 * backend. AIMD sees only drops and 5 s latencies: it grows until the backend's queue is long.
 * Vegas's own flaw (a probe of the no-load latency under overload measured a queued one, and
 * the limit climbed at each probe) is mended here as BBR does: see `vegas.ts`. Its queue target
 * counts requests (3 to 6·log10 of the limit, capped by what the backend serves without a queue),
 * so a small backend waits longer: on 4 slots at 3× a limit of 6.9, p50 16.7 ms, p99 20.1 ms; on
 * 1 slot (a CPU-bound handler) a limit of 2.7, p99 37 ms; on 100 slots a limit of 110, p99
 * 12.3 ms (the same test). The default queue changes none of these at 3× and 10×: the overload
 * is sustained, so every refusal is answered at arrival.
 *
 * @param options - all optional
 * @throws {@link SluiceConfigError} naming the first invalid option
 * @example
 * ```ts
 * import { createAdaptiveLimiter } from '@sluice/core';
 *
 * const limiter = createAdaptiveLimiter({ shares: { checkout: 0.7, browse: 0.3 } });
 * let decision = limiter.acquire('checkout');
 * if (decision instanceof Promise) decision = await decision; // it waited in the queue
 * if (decision.allowed) {
 *   try {
 *     // … handle the request
 *   } finally {
 *     decision.permit?.release();
 *   }
 * } // else: 503 with Retry-After: decision.retryAfterMs
 * ```
 */
export function createAdaptiveLimiter(options: AdaptiveLimiterOptions = {}): AdaptiveLimiter {
  const resolved = resolveAdaptiveOptions(options);
  const { clock, queue, min, max } = resolved;
  const bounds = { min, max };
  const algorithm = LIMIT_ALGORITHMS[resolved.algorithm] as LimitAlgorithm<LimitState>;
  let state = algorithm.init(resolved.initial);
  let limit = resolved.initial;
  const partitions = new Partitions(resolved.shares);
  const waiters = new Waiters(queue?.targetMs ?? 1);
  const window = new SampleWindow(resolved.windowMs);
  let closed = false;
  /** The event loop cut the limit and no window has closed since. */
  let lagCut = false;
  let metrics: LimiterMetrics | undefined;

  const setLimit = (next: LimitState): void => {
    state = next;
    limit = Math.max(min, Math.floor(state.limit));
  };

  const retryAfterMs = (): number => {
    const rtt = window.meanRttMs;
    if (Number.isNaN(rtt)) return UNMEASURED_RETRY_MS;
    return Math.max(1, Math.ceil((rtt * (waiters.size + 1)) / Math.max(1, limit)));
  };

  const refusal = (partition: Partition, reason: AdaptiveRefusal, waitedMs: number): AdaptiveDecision => {
    partition.shed++;
    return {
      allowed: false,
      partition: partition.name,
      limit,
      inFlight: partitions.inFlight,
      retryAfterMs: retryAfterMs(),
      waitedMs,
      reason,
    };
  };

  const admit = (partition: Partition, now: number, waitedMs: number): AdaptiveDecision => {
    partitions.take(partition);
    return {
      allowed: true,
      permit: new Permit(partition, now, partitions.inFlight, release),
      partition: partition.name,
      limit,
      inFlight: partitions.inFlight,
      retryAfterMs: 0,
      waitedMs,
    };
  };

  /** Under overload, the waiters older than the target leave refused (CoDel drops from the head). */
  const shedStanding = (now: number): void => {
    if (queue === undefined || !waiters.overloaded(now)) return;
    for (const waiter of waiters.takeOlder(now - queue.targetMs)) waiter.settle(false, 'overloaded');
  };

  /** Admits waiters while permits are free: newest first under overload, oldest first otherwise. */
  const drain = (now: number): void => {
    if (waiters.size === 0) return;
    shedStanding(now);
    const lifo = waiters.overloaded(now);
    for (;;) {
      const waiter = waiters.take(lifo, (w) => partitions.mayAdmit(w.partition, limit, now));
      if (waiter === undefined) return;
      waiter.settle(true);
    }
  };

  function release(permit: Permit, options: AdaptiveReleaseOptions | undefined): void {
    const now = clock();
    partitions.give(permit.part);
    const dropped = options?.dropped === true;
    if (options?.ignore !== true || dropped) {
      const rttMs = dropped ? undefined : Math.max(0, now - permit.startedAt);
      const sample = window.add(now, rttMs, permit.inFlightAtStart, dropped);
      if (sample !== undefined) {
        setLimit(algorithm.update(state, sample, bounds));
        lagCut = false;
      }
    }
    drain(now);
  }

  const enqueue = (
    partition: Partition,
    now: number,
    signal: AbortSignal | undefined,
  ): Promise<AdaptiveDecision> =>
    new Promise((resolve) => {
      const onAbort = (): void => {
        if (waiters.remove(waiter)) waiter.settle(false, 'cancelled');
      };
      let settled = false;
      const waiter: Waiter = {
        partition,
        since: now,
        settle(admitted, reason) {
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          const at = clock();
          const waitedMs = Math.max(0, at - now);
          const decision = admitted
            ? admit(partition, at, waitedMs)
            : refusal(partition, reason ?? 'queue-timeout', waitedMs);
          metrics?.adaptiveDecided?.(decision);
          resolve(decision);
        },
      };
      waiters.push(waiter);
      // settle runs only later, from a release, a timer, the signal or close(). Just past
      // targetMs a waiter still there makes the queue stand: it is refused then (with any older),
      // not after maxWaitMs, when no release or arrival came to look.
      const maxWaitMs = queue?.maxWaitMs ?? 0;
      const lookMs = Math.min(maxWaitMs, (queue?.targetMs ?? 0) + 1);
      const timeout = (): void => {
        if (waiters.remove(waiter)) waiter.settle(false, 'queue-timeout');
      };
      let timer = setTimeout(() => {
        if (lookMs >= maxWaitMs) return timeout();
        shedStanding(clock());
        if (settled) return;
        timer = setTimeout(timeout, maxWaitMs - lookMs);
        timer.unref?.();
      }, lookMs);
      timer.unref?.();
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  /** The decision, a wait in the queue, or (`wait` false) `undefined` where it would wait. */
  const decideNow = (
    partition: Partition,
    now: number,
    options: AdaptiveAcquireOptions | undefined,
    wait: boolean,
  ): AdaptiveDecision | Promise<AdaptiveDecision> | undefined => {
    if (closed) return refusal(partition, 'cancelled', 0);
    shedStanding(now);
    if (partitions.mayAdmit(partition, limit, now)) return admit(partition, now, 0);
    partition.wantsUntil = now + WANTS_MS;
    let reason: AdaptiveRefusal | undefined;
    if (queue === undefined) reason = 'limited';
    else if (options?.signal?.aborted === true) reason = 'cancelled';
    else if (waiters.overloaded(now)) {
      waiters.prolong(now);
      reason = 'overloaded';
    } else if (waiters.size >= queue.maxSize) reason = 'queue-full';
    if (options?.dryRun === true) {
      // Counted and measured as any request; reported as the refusal it would have been (one that
      // would have waited in the queue is not a refusal: admitted, without the wait).
      const admitted = admit(partition, now, 0);
      if (reason === undefined) return admitted;
      return { ...refusal(partition, reason, 0), permit: admitted.permit, inFlight: admitted.inFlight };
    }
    if (reason !== undefined) return refusal(partition, reason, 0);
    return wait ? enqueue(partition, now, options?.signal) : undefined;
  };

  const stopMonitor = resolved.eventLoop?.monitor((delayMs) => {
    if (delayMs <= (resolved.eventLoop?.maxDelayMs ?? Infinity)) return;
    // Under half the limit in flight the lag is not this limit's doing (another process's load,
    // as Vegas judges an app-limited window); one cut a window, so it is measured before the next.
    if (lagCut || partitions.inFlight * 2 < limit) return;
    // The process itself is the bottleneck: halve at once, and measure afresh from there.
    setLimit({ ...state, limit: Math.max(min, Math.floor(limit / 2)) });
    window.reset();
    lagCut = true;
  });

  const limiter: AdaptiveLimiter = {
    name: resolved.name,
    acquire(name, options) {
      const decision = decideNow(partitions.of(name), clock(), options, true) as
        AdaptiveDecision | Promise<AdaptiveDecision>;
      if (!(decision instanceof Promise)) metrics?.adaptiveDecided?.(decision);
      return decision;
    },
    acquireSync(name, options) {
      const decision = decideNow(partitions.of(name), clock(), options, false) as
        AdaptiveDecision | undefined;
      if (decision !== undefined) metrics?.adaptiveDecided?.(decision);
      return decision;
    },
    limit: () => limit,
    inFlight: () => partitions.inFlight,
    stats(): AdaptiveStats {
      const byName: Record<string, AdaptivePartitionStats> = {};
      for (const p of partitions.all()) {
        byName[p.name] = {
          limit: partitions.guaranteed(p, limit),
          inFlight: p.inFlight,
          queued: p.queued,
          shed: p.shed,
        };
      }
      return { limit, inFlight: partitions.inFlight, queued: waiters.size, partitions: byName };
    },
    close() {
      if (closed) return;
      closed = true;
      stopMonitor?.();
      for (const waiter of waiters.takeAll()) waiter.settle(false, 'cancelled');
    },
  };
  if (resolved.metrics !== undefined) {
    metrics = resolved.metrics();
    metrics.watchAdaptive?.(limiter);
  }
  return limiter;
}

/** A permit; `release` runs once. */
class Permit implements AdaptivePermit {
  #released = false;
  readonly #onRelease: (permit: Permit, options: AdaptiveReleaseOptions | undefined) => void;
  /** Its partition's bookkeeping. */
  readonly part: Partition;
  /** Clock ms when it was taken. */
  readonly startedAt: number;
  /** Requests in flight once it was taken. */
  readonly inFlightAtStart: number;

  constructor(
    part: Partition,
    startedAt: number,
    inFlightAtStart: number,
    onRelease: (permit: Permit, options: AdaptiveReleaseOptions | undefined) => void,
  ) {
    this.part = part;
    this.startedAt = startedAt;
    this.inFlightAtStart = inFlightAtStart;
    this.#onRelease = onRelease;
  }

  get partition(): string {
    return this.part.name;
  }

  get released(): boolean {
    return this.#released;
  }

  release(options?: AdaptiveReleaseOptions): void {
    if (this.#released) return;
    this.#released = true;
    this.#onRelease(this, options);
  }
}
