import { clockReader } from '../policy/option-checks';
import { Circuits } from '../resilience/circuits';
import { DeadlineList } from '../resilience/deadline-list';
import { promiseOf } from '../resilience/guarded-call';
import { asError, StoreTimeoutError, storeErrorScope } from '../resilience/store-errors';
import { FAIL_CLOSED_RETRY_MS } from '../resilience/store-guard';
import type { PermitAcquireRequest } from '../stores/permit-store';
import type { ConcurrencyEmitter } from './concurrency-events';
import { leaseIds } from './lease-ids';
import {
  AcquireCall,
  ReleaseCall,
  tellingPermits,
  type PermitGuard,
  type Grant,
  type RemoteAnswer,
} from './permit-calls';
import { leaseTable, permitTable, type PermitTable } from './permit-table';
import type { ResolvedConcurrencyOptions } from './resolve-concurrency-options';

export type { Grant, RemoteAnswer } from './permit-calls';

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
  /**
   * Whether a grant held for `key` still counts, so it may be handed to a waiter: a lease held
   * here, or the insurance's while the key's store is still away.
   */
  counts(key: string, grant: Grant): boolean;
}

/** Most failed releases remembered for a retry; past it, the lease's expiry alone frees them. */
const MAX_RETRIES = 10_000;

const DONE = Promise.resolve();

/**
 * The remote path of a concurrency limiter: each store call bounded by `timeoutMs`, behind a
 * circuit breaker per store node (as a rate limiter's: see `Circuits`); when the store fails,
 * `onStoreError` decides the acquire. Held leases are renewed every `leaseMs / 3` by one timer,
 * which runs only while this process holds some (one script call per key with held leases).
 *
 * This process never holds more than `max` permits of a key, whatever Redis forgets (a restart
 * without persistence, a failover to a replica that lagged, `FLUSHALL`, eviction): the leases it
 * holds are counted here too (by every limiter on the store and prefix), a lease Redis grants
 * while they and the insurance permits held here reach `max` goes back at once (the acquire is
 * refused as limited, or waits in the queue), and a renewal takes every lease still held back
 * into Redis, whatever its count. A running request's lease is never dropped: it is renewed
 * until released. Other instances see only what Redis counts: until the leases Redis lost are
 * taken back (at the next renewal), they may be admitted in their place, so after one loss the
 * key may hold up to twice `max` across instances until the requests that ran through it end.
 */
export function guardPermits(
  options: ResolvedConcurrencyOptions,
  events: ConcurrencyEmitter,
): GuardedPermits {
  const { prefix, max, leaseMs, timeoutMs, onStoreError, metrics } = options;
  const store = options.remote as NonNullable<ResolvedConcurrencyOptions['remote']>;
  const circuits = new Circuits({
    nodeOf: store.nodeOf,
    now: options.clock ?? Date.now,
    timeoutMs,
    up: metrics === undefined ? undefined : (up) => metrics.storeUp(up),
  });
  // Every store call shares `timeoutMs`: one deadline list bounds them all. Its timer goes with
  // the last call waiting: an idle limiter keeps no timer (the renewal's included).
  const deadlines = new DeadlineList(timeoutMs, { clearWhenIdle: true });
  const insurance = onStoreError.mode === 'insurance' ? permitTable(onStoreError.store, prefix) : undefined;
  const insuredMax =
    onStoreError.mode === 'insurance' ? Math.max(1, Math.floor(max / onStoreError.instances)) : max;
  /** The leases held here of each key, as every limiter on this store and prefix counts them. */
  const leases = leaseTable(store, prefix);
  const nextId = leaseIds();
  const nowMs = clockReader(options.clock);

  /**
   * Runs one store call bounded and counted by the circuit, and reported to `metrics` as a rate
   * limiter's store calls are (duration, errors, health); rethrows its failure once reported.
   * For the renewals and retried releases; an acquire and a release are one object each (see
   * {@link AcquireCall}).
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
          succeeded(key, startedAt);
        } catch (error) {
          // A listener or sink that throws fails the call, as it did inside the call's try.
          report(key, error, startedAt);
          throw error;
        }
        return result;
      },
      (error: unknown) => {
        report(key, error, startedAt);
        throw error;
      },
    );
  };
  /** Reports a store call that answered: its duration, and the end of an outage. */
  const succeeded = (key: string, startedAt: number): void => {
    metrics?.storeCall((performance.now() - startedAt) / 1000);
    answered(key);
  };
  /** Reports a failed store call: to `metrics`, the circuit and `storeError`. */
  const report = (key: string, error: unknown, startedAt: number): void => {
    if (metrics !== undefined) {
      metrics.storeCall((performance.now() - startedAt) / 1000);
      metrics.storeError(error instanceof StoreTimeoutError ? 'timeout' : 'error');
    }
    const scope = storeErrorScope(error);
    if (scope === 'store') circuits.failed(key);
    else answered(key);
    if (events.has('storeError')) {
      const lag =
        error instanceof StoreTimeoutError && error.eventLoopLagMs > 0
          ? { eventLoopLagMs: error.eventLoopLagMs }
          : {};
      events.emit('storeError', { error: asError(error), key, mode: onStoreError.mode, scope, ...lag });
    }
  };
  const answered = (key: string): void => {
    const outage = circuits.answered(key);
    if (outage !== undefined && events.has('storeRecovered')) events.emit('storeRecovered', outage);
  };

  // This limiter's leases, by key, renewed on each tick (each also counted in `leases`).
  const held = new Map<string, Set<string>>();

  /**
   * `onStoreError`'s answer when the store could not give one. The insurance admits only while
   * its permits and the leases this process holds for the key (still running requests, whatever
   * Redis makes of them meanwhile) stay within the insured `max`: each instance limits alone
   * during an outage to its share in all, not to its share on top of what Redis granted it.
   */
  const degrade = (key: string): RemoteAnswer => {
    if (onStoreError.mode === 'fail-open') return { grant: null, held: 0, degraded: 'fail-open' };
    if (onStoreError.mode === 'fail-closed') {
      const retryAfterMs = Math.max(FAIL_CLOSED_RETRY_MS, circuits.of(key).retryInMs());
      return {
        grant: undefined,
        held: 0,
        degraded: 'fail-closed',
        reason: 'store-unavailable',
        retryAfterMs,
      };
    }
    const table = insurance as PermitTable;
    const leased = leases.count(key);
    const taken = table.take(key, insuredMax - leased);
    return taken < 0
      ? { grant: undefined, held: table.count(key) + leased, degraded: 'insurance', reason: 'limited' }
      : { grant: table, held: taken + leased, degraded: 'insurance' };
  };
  /**
   * Insurance permits of `key` held here now, which a lease Redis grants must fit beside (see
   * {@link PermitGuard.insured}). No lookup while no key holds any: the hot path.
   */
  const insured = (key: string): number =>
    insurance === undefined || insurance.size === 0 ? 0 : insurance.count(key);

  // Releases that failed, retried on each tick.
  const retries = new Map<string, { readonly key: string; readonly failedAt: number }>();
  let timer: NodeJS.Timeout | undefined;
  /** Holds lease `id` when fewer than `room` leases of the key are held here: `false` when not. */
  const track = (key: string, id: string, room: number): boolean => {
    if (leases.take(key, room) < 0) return false;
    let ids = held.get(key);
    if (ids === undefined) held.set(key, (ids = new Set()));
    ids.add(id);
    run();
    return true;
  };
  const run = (): void => {
    if (timer !== undefined) return;
    timer = setInterval(tick, Math.floor(leaseMs / 3));
    timer.unref();
  };
  const untrack = (key: string, id: string): void => {
    const ids = held.get(key);
    if (ids === undefined || !ids.delete(id)) return;
    leases.give(key);
    if (ids.size === 0) held.delete(key);
    idle();
  };
  const idle = (): void => {
    if (held.size > 0 || retries.size > 0 || timer === undefined) return;
    clearInterval(timer);
    timer = undefined;
  };
  const tick = (): void => {
    renewHeld();
    const expiredBefore = performance.now() - leaseMs;
    for (const [id, { key, failedAt }] of retries) {
      if (failedAt < expiredBefore) retries.delete(id);
      // Its node is away: the release waits for the next tick (or the lease's expiry).
      else if (circuits.allow(key))
        guarded(key, () => store.release({ prefix, key, id, timeoutMs })).then(() => {
          retries.delete(id);
          idle();
        }, ignore);
    }
    idle();
  };

  /**
   * Renews every lease held here, at one "now"; one that had lapsed is taken back (its request
   * still runs) and reported as `leaseLost`, and stays held either way. A `clock` that broke
   * renews none: its error is the acquires' to tell (they reject, naming it), never thrown from
   * this timer, which would end the process. The leases then lapse after `leaseMs` unless it
   * mends, and are taken back when it does.
   */
  const renewHeld = (): void => {
    let now: number | undefined;
    try {
      now = nowMs();
    } catch {
      return;
    }
    for (const [key, ids] of held) {
      // Its node is away: the leases wait; renewal takes lapsed ones back.
      if (!circuits.allow(key)) continue;
      const request = { prefix, key, max, leaseMs, ids: [...ids], nowMs: now, timeoutMs };
      guarded(key, () => store.renew(request)).then((reply) => {
        // A store of the user's own answering without `lost`: none lapsed (a throw here would be
        // an unhandled rejection).
        const lost: unknown = reply?.lost;
        if (!Array.isArray(lost) || !events.has('leaseLost')) return;
        for (let i = 0; i < lost.length; i++) events.emit('leaseLost', { key });
      }, ignore);
    }
  };

  /** A failed release, retried at each tick until it succeeds or its lease has expired. */
  const retry = (key: string, id: string): void => {
    if (retries.size >= MAX_RETRIES) return;
    retries.set(id, { key, failedAt: performance.now() });
    run();
  };
  const tell = tellingPermits(store);
  const guard: PermitGuard = {
    deadlines,
    succeeded,
    report,
    degrade,
    insured,
    leased: (key) => leases.count(key),
    track,
    retry,
    // Too late is not never: a lease the store took after all is given back. Called from the
    // store's answer: a store that throws instead of rejecting must not throw there.
    giveBack: (key, id) => {
      try {
        void store.release({ prefix, key, id }).catch(ignore);
      } catch {
        // Its lease expires after leaseMs.
      }
    },
  };

  return {
    acquire(key) {
      if (!circuits.allow(key)) return Promise.resolve(degrade(key));
      let request: PermitAcquireRequest;
      try {
        request = { prefix, key, max, leaseMs, id: nextId(), nowMs: nowMs(), timeoutMs };
      } catch (error) {
        return Promise.reject(error); // a broken clock: the one way an acquire rejects
      }
      const call = new AcquireCall(guard, request);
      const answer = promiseOf<RemoteAnswer>(call);
      deadlines.add(call);
      try {
        tell.acquire(request, call);
      } catch (error) {
        // A store that throws instead of rejecting fails like any other.
        call.failed(error);
      }
      return answer;
    },
    release(key, id) {
      untrack(key, id);
      if (!circuits.allow(key)) {
        retry(key, id);
        return DONE;
      }
      const call = new ReleaseCall(guard, key, id);
      const done = promiseOf<void>(call);
      deadlines.add(call);
      try {
        tell.release({ prefix, key, id, timeoutMs }, call);
      } catch (error) {
        call.failed(error);
      }
      return done;
    },
    counts(key, grant) {
      if (typeof grant === 'string') return held.get(key)?.has(grant) === true;
      return grant !== null && !circuits.of(key).allowsAll();
    },
    inFlight(key) {
      let request: Parameters<typeof store.renew>[0];
      try {
        request = { prefix, key, max, leaseMs, ids: [], nowMs: nowMs(), timeoutMs };
      } catch (error) {
        return Promise.reject(error); // a broken clock: rejected, as acquire does
      }
      return deadlines.bound(store.renew(request)).then((reply) => reply.held);
    },
  };
}

function ignore(): void {
  // Reported through `storeError` already; the next tick tries again.
}
