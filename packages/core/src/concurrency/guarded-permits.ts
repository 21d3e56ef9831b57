import { SluiceConfigError } from '../policy/config-error';
import { CircuitBreaker } from '../resilience/circuit-breaker';
import type { DegradedMode } from '../resilience/events';
import { DeadlineList } from '../resilience/deadline-list';
import { asError, StoreTimeoutError, storeErrorScope } from '../resilience/store-errors';
import { COOLDOWN_MS, FAIL_CLOSED_RETRY_MS, FAILURE_THRESHOLD } from '../resilience/store-guard';
import type { ConcurrencyEmitter } from './concurrency-events';
import { leaseIds } from './lease-ids';
import { permitTable, type PermitTable } from './permit-table';
import type { ResolvedConcurrencyOptions } from './resolve-concurrency-options';

/**
 * What a permit holds: a count in a table of this process (a memory store, or the insurance
 * store while the shared one is away), a lease id in the shared store, or `null` when nothing
 * was taken (`'fail-open'`).
 */
export type Grant = PermitTable | string | null;

/** A shared store's answer to one acquire, or `onStoreError`'s when it failed. */
export interface RemoteAnswer {
  /** What was granted; `undefined` when refused. */
  readonly grant: Grant | undefined;
  /** Permits of the key in use, as counted by whoever decided. */
  readonly held: number;
  readonly degraded?: DegradedMode;
  /** `'store-unavailable'` when fail-closed refused; else `'limited'` on a refusal. */
  readonly reason?: 'limited' | 'store-unavailable';
  /** Fail-closed: when to try again. */
  readonly retryAfterMs?: number;
}

/** A shared store's permits behind a timeout, a circuit breaker and `onStoreError`. */
export interface GuardedPermits {
  acquire(key: string): Promise<RemoteAnswer>;
  /**
   * Gives back lease `id`: it is no longer renewed, and the store is told. A failed call is
   * retried at each renewal until it succeeds or the lease has expired by itself. Never rejects.
   */
  release(key: string, id: string): Promise<void>;
  /** Live leases of the key in the store. */
  inFlight(key: string): Promise<number>;
}

/** Most failed releases remembered for a retry; past it, the lease's expiry alone frees them. */
const MAX_RETRIES = 10_000;

/**
 * The remote path of a concurrency limiter: each store call bounded by `timeoutMs`, behind one
 * circuit breaker (the rate limiter's thresholds); when the store fails, `onStoreError` decides
 * the acquire. Held leases are renewed every `leaseMs / 3` by one timer, which runs only while
 * this process holds some (one script call per key with held leases).
 */
export function guardPermits(
  options: ResolvedConcurrencyOptions,
  events: ConcurrencyEmitter,
): GuardedPermits {
  const { prefix, max, leaseMs, timeoutMs, onStoreError, metrics } = options;
  const store = options.remote as NonNullable<ResolvedConcurrencyOptions['remote']>;
  const circuit = new CircuitBreaker(FAILURE_THRESHOLD, COOLDOWN_MS, options.clock ?? Date.now);
  // Every store call shares `timeoutMs`: one deadline list bounds them all. Its timer goes with
  // the last call waiting: an idle limiter keeps no timer (the renewal's included).
  const deadlines = new DeadlineList(timeoutMs, { clearWhenIdle: true });
  const insurance = onStoreError.mode === 'insurance' ? permitTable(onStoreError.store, prefix) : undefined;
  const insuredMax =
    onStoreError.mode === 'insurance' ? Math.max(1, Math.floor(max / onStoreError.instances)) : max;
  const nextId = leaseIds();
  const nowMs = (): number | undefined => {
    if (options.clock === undefined) return undefined;
    const ms = options.clock();
    if (!Number.isFinite(ms) || ms < 0)
      throw new SluiceConfigError('clock', ms, 'must return epoch milliseconds (a finite number >= 0)');
    return Math.floor(ms);
  };

  /**
   * Runs one store call bounded and counted by the circuit, and reported to `metrics` as a rate
   * limiter's store calls are (duration, errors, health); rethrows its failure once reported.
   */
  const guarded = <T>(key: string, run: () => Promise<T>): Promise<T> => {
    const startedAt = metrics === undefined ? 0 : performance.now();
    let call: Promise<T>;
    try {
      call = run();
    } catch (error) {
      // A store that throws instead of rejecting fails like any other.
      call = Promise.reject(error);
    }
    return deadlines.bound(call).then(
      (result) => {
        try {
          metrics?.storeCall((performance.now() - startedAt) / 1000);
          answered();
        } catch (error) {
          // A listener or sink that throws fails the call, as it did inside the call's try.
          return failed(key, error, startedAt);
        }
        return result;
      },
      (error: unknown) => failed(key, error, startedAt),
    );
  };
  /** Reports a failed store call, and rethrows it. */
  const failed = (key: string, error: unknown, startedAt: number): never => {
    if (metrics !== undefined) {
      metrics.storeCall((performance.now() - startedAt) / 1000);
      metrics.storeError(error instanceof StoreTimeoutError ? 'timeout' : 'error');
    }
    const scope = storeErrorScope(error);
    if (scope === 'store') {
      circuit.failed();
      if (metrics !== undefined && circuit.retryInMs() > 0) metrics.storeUp(false);
    } else answered();
    if (events.has('storeError')) {
      const lag =
        error instanceof StoreTimeoutError && error.eventLoopLagMs > 0
          ? { eventLoopLagMs: error.eventLoopLagMs }
          : {};
      events.emit('storeError', { error: asError(error), key, mode: onStoreError.mode, scope, ...lag });
    }
    throw error;
  };
  const answered = (): void => {
    const outage = circuit.succeeded();
    if (outage === undefined) return;
    metrics?.storeUp(true);
    if (events.has('storeRecovered')) events.emit('storeRecovered', outage);
  };

  /** `onStoreError`'s answer when the store could not give one. */
  const degrade = (key: string): RemoteAnswer => {
    if (onStoreError.mode === 'fail-open') return { grant: null, held: 0, degraded: 'fail-open' };
    if (onStoreError.mode === 'fail-closed') {
      const retryAfterMs = Math.max(FAIL_CLOSED_RETRY_MS, circuit.retryInMs());
      return {
        grant: undefined,
        held: 0,
        degraded: 'fail-closed',
        reason: 'store-unavailable',
        retryAfterMs,
      };
    }
    const table = insurance as PermitTable;
    const taken = table.take(key, insuredMax);
    return taken < 0
      ? { grant: undefined, held: table.count(key), degraded: 'insurance', reason: 'limited' }
      : { grant: table, held: taken, degraded: 'insurance' };
  };

  // Leases held here, by key, renewed on each tick; releases that failed, retried on each tick.
  const held = new Map<string, Set<string>>();
  const retries = new Map<string, { readonly key: string; readonly failedAt: number }>();
  let timer: NodeJS.Timeout | undefined;
  const track = (key: string, id: string): void => {
    let ids = held.get(key);
    if (ids === undefined) held.set(key, (ids = new Set()));
    ids.add(id);
    run();
  };
  const run = (): void => {
    if (timer !== undefined) return;
    timer = setInterval(tick, Math.floor(leaseMs / 3));
    timer.unref();
  };
  const untrack = (key: string, id: string): void => {
    const ids = held.get(key);
    if (ids === undefined || !ids.delete(id)) return;
    if (ids.size === 0) held.delete(key);
    idle();
  };
  const idle = (): void => {
    if (held.size > 0 || retries.size > 0 || timer === undefined) return;
    clearInterval(timer);
    timer = undefined;
  };
  const tick = (): void => {
    if (!circuit.allow()) return; // the store is away: the leases wait; renewal takes lapsed ones again
    for (const [key, ids] of held) {
      const request = { prefix, key, max, leaseMs, ids: [...ids], nowMs: nowMs(), timeoutMs };
      guarded(key, () => store.renew(request)).then(({ lost }) => {
        for (const id of lost) {
          untrack(key, id);
          if (events.has('leaseLost')) events.emit('leaseLost', { key });
        }
      }, ignore);
    }
    const expiredBefore = performance.now() - leaseMs;
    for (const [id, { key, failedAt }] of retries) {
      if (failedAt < expiredBefore) retries.delete(id);
      else
        guarded(key, () => store.release({ prefix, key, id, timeoutMs })).then(() => {
          retries.delete(id);
          idle();
        }, ignore);
    }
    idle();
  };

  return {
    async acquire(key) {
      if (!circuit.allow()) return degrade(key);
      const id = nextId();
      const call = store.acquire({ prefix, key, max, leaseMs, id, nowMs: nowMs(), timeoutMs });
      try {
        const reply = await guarded(key, () => call);
        if (!reply.acquired) return { grant: undefined, held: reply.held, reason: 'limited' };
        track(key, id);
        return { grant: id, held: reply.held };
      } catch (error) {
        // Too late is not never: a lease the store took after all is given back when its answer comes.
        if (error instanceof StoreTimeoutError)
          call.then(
            (reply) => reply.acquired && void store.release({ prefix, key, id }).catch(ignore),
            ignore,
          );
        return degrade(key);
      }
    },
    async release(key, id) {
      untrack(key, id);
      const failed = (): void => {
        if (retries.size >= MAX_RETRIES) return;
        retries.set(id, { key, failedAt: performance.now() });
        run();
      };
      if (!circuit.allow()) return failed();
      try {
        await guarded(key, () => store.release({ prefix, key, id, timeoutMs }));
      } catch {
        failed();
      }
    },
    inFlight(key) {
      return deadlines
        .bound(store.renew({ prefix, key, max, leaseMs, ids: [], nowMs: nowMs(), timeoutMs }))
        .then((reply) => reply.held);
    },
  };
}

function ignore(): void {
  // Reported through `storeError` already; the next tick tries again.
}
