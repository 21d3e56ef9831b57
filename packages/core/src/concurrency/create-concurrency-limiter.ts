import { callListener } from '../limiter/thenable';
import { SluiceConfigError } from '../policy/config-error';
import type { DegradedMode } from '../resilience/events';
import { concurrencyEmitter } from './concurrency-events';
import type {
  AcquireOptions,
  ConcurrencyDecision,
  ConcurrencyLimiter,
  ConcurrencyLimiterOptions,
  ConcurrencyRefusal,
  Permit,
} from './concurrency-types';
import { guardPermits, type Grant } from './guarded-permits';
import { permitTable, PermitTable } from './permit-table';
import { resolveConcurrencyOptions } from './resolve-concurrency-options';
import { WaitQueue, type Waiter } from './wait-queue';

const DONE = Promise.resolve();
/**
 * Shared stores: the first waiter of a key asks the store again after this pause, doubling up to
 * `POLL_MAX_MS`, for permits freed by other instances (those freed here are handed over at once).
 */
const POLL_MIN_MS = 10;
const POLL_MAX_MS = 250;
/** Weight of the newest hold time in the running mean behind `retryAfterMs`. */
const HOLD_WEIGHT = 0.1;

type GiveBack = (key: string, grant: Grant, takenAt: number) => Promise<void>;

/** A permit: releasing it twice does nothing the second time. */
class HeldPermit implements Permit {
  #released = false;
  readonly #grant: Grant;
  readonly #takenAt: number;
  readonly #giveBack: GiveBack;

  constructor(
    readonly key: string,
    grant: Grant,
    takenAt: number,
    giveBack: GiveBack,
  ) {
    this.#grant = grant;
    this.#takenAt = takenAt;
    this.#giveBack = giveBack;
  }

  get released(): boolean {
    return this.#released;
  }

  release(): Promise<void> {
    if (this.#released) return DONE;
    this.#released = true;
    return this.#giveBack(this.key, this.#grant, this.#takenAt);
  }
}

/**
 * Creates a concurrency limiter (nginx `limit_conn`): at most `max` requests in flight per key.
 * A request takes a permit with `acquire` and gives it back with `permit.release()` when it ends;
 * with a `queue`, it waits for one in arrival order instead of being refused.
 *
 * In memory, permits are counts in this process. On a `RedisStore` they are leases shared by
 * every instance, renewed while held, so a crashed instance's permits come back after `leaseMs`;
 * an admission costs one script call and its release one. No process holds more than `max` of
 * a key, whatever Redis forgets (see `ConcurrencyLimiterOptions.store`).
 *
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from '@sluice/core';
 *
 * const checkout = createConcurrencyLimiter({ max: 1 }); // one checkout per user at a time
 * const decision = await checkout.acquire(`user:${userId}`);
 * if (!decision.allowed) return reply409();
 * try {
 *   await pay();
 * } finally {
 *   await decision.permit?.release();
 * }
 * ```
 * @throws {@link SluiceConfigError} naming the first invalid or unknown option
 */
export function createConcurrencyLimiter(options: ConcurrencyLimiterOptions): ConcurrencyLimiter {
  const resolved = resolveConcurrencyOptions(options);
  const { max, metrics } = resolved;
  const events = concurrencyEmitter();
  const table = resolved.local === undefined ? undefined : permitTable(resolved.local, resolved.prefix);
  const remote = resolved.remote === undefined ? undefined : guardPermits(resolved, events);
  const queue =
    resolved.queue === undefined
      ? undefined
      : new WaitQueue(resolved.queue.maxSize, resolved.queue.maxPerKey);
  const maxWaitMs = resolved.queue?.maxWaitMs ?? 0;
  let holding = 0;
  /** Running mean of how long permits are held, in ms: measured only with a queue, which uses it. */
  let holdMs = 0;
  /**
   * Tells the sink of an answer. A sink must not throw; one that does is warned about once and
   * changes nothing: thrown out of here, it would lose the permit just taken (in memory, for
   * good) and fail the acquire, or a release that served a waiter.
   */
  const acquired = metrics?.acquired;
  const tell =
    acquired === undefined ? undefined : (decision: ConcurrencyDecision) => acquired.call(metrics, decision);
  let warned = false;
  const sinkThrew = (error: unknown): void => {
    if (warned) return;
    warned = true;
    process.emitWarning(
      `a sluice metrics sink's acquired threw (ignored; further ones are not reported): ${String(error)}`,
      'SluiceListenerWarning',
    );
  };
  const report =
    tell === undefined
      ? undefined
      : (decision: ConcurrencyDecision) => callListener(tell, decision, sinkThrew);

  const admitted = (
    key: string,
    grant: Grant,
    inFlight: number,
    waitedMs: number,
    degraded: DegradedMode | undefined,
  ): ConcurrencyDecision => {
    holding++;
    const permit = new HeldPermit(key, grant, queue === undefined ? 0 : performance.now(), giveBack);
    const decision: ConcurrencyDecision =
      degraded === undefined
        ? { allowed: true, permit, key, max, inFlight, retryAfterMs: 0, waitedMs }
        : { allowed: true, permit, key, max, inFlight, retryAfterMs: 0, waitedMs, degraded };
    report?.(decision);
    return decision;
  };
  const refused = (
    key: string,
    reason: ConcurrencyRefusal,
    inFlight: number,
    waitedMs: number,
    degraded?: DegradedMode,
    retryAfterMs = estimate(key),
  ): ConcurrencyDecision => {
    const decision: ConcurrencyDecision =
      degraded === undefined
        ? { allowed: false, key, max, inFlight, retryAfterMs, waitedMs, reason }
        : { allowed: false, key, max, inFlight, retryAfterMs, waitedMs, reason, degraded };
    report?.(decision);
    if (events.has('limited')) events.emit('limited', decision);
    return decision;
  };
  /** With a queue: when the requests ahead (and this one) should have had a permit, at the measured hold time. */
  const estimate = (key: string): number =>
    queue === undefined || holdMs === 0
      ? 0
      : Math.max(1, Math.ceil((holdMs * (queue.waiting(key) + 1)) / max));
  /** Permits in use for a refusal reported by the queue: counted here, or full (it waited because it was). */
  const countOf = (key: string): number => (table === undefined ? max : table.count(key));
  const degradedOf = (grant: Grant): DegradedMode | undefined =>
    grant === null
      ? 'fail-open'
      : remote !== undefined && grant instanceof PermitTable
        ? 'insurance'
        : undefined;

  /** Frees what a grant holds, in the store or table it came from. */
  const free = (key: string, grant: Grant): Promise<void> => {
    if (typeof grant === 'string') return (remote as NonNullable<typeof remote>).release(key, grant);
    grant?.give(key);
    return DONE;
  };
  function giveBack(key: string, grant: Grant, takenAt: number): Promise<void> {
    holding--;
    if (queue === undefined) return free(key, grant);
    const heldMs = performance.now() - takenAt;
    holdMs = holdMs === 0 ? heldMs : holdMs + (heldMs - holdMs) * HOLD_WEIGHT;
    // Handed straight to the first waiter of the key: no store call, and no one can cut in.
    // Not a grant that no longer counts: nothing (fail-open), or the insurance's once the store
    // answers again; the waiter then asks the store. A lease held here counts, whatever Redis
    // made of it (it takes it back at the next renewal).
    const counts = grant !== null && (remote === undefined || remote.counts(key, grant));
    const waiter = counts ? queue.shift(key) : undefined;
    if (waiter === undefined) {
      if (!counts && queue.waiting(key) > 0) wake(key);
      return free(key, grant);
    }
    const inFlight = grant instanceof PermitTable ? grant.count(key) : max;
    waiter.settle(admitted(key, grant, inFlight, performance.now() - waiter.since, degradedOf(grant)));
    return DONE;
  }

  // In memory: waiters are served when a permit of their key is given back to the table (by any
  // limiter sharing it), watched only while some wait.
  const serveLocal = (key: string): void => {
    const line = queue as WaitQueue;
    for (let head = line.head(key); head !== undefined; head = line.head(key)) {
      const taken = (table as PermitTable).take(key, max);
      if (taken < 0) return;
      line.shift(key);
      head.settle(admitted(key, table as PermitTable, taken, performance.now() - head.since, undefined));
    }
  };
  const onFreed = (key: string): void => {
    if (queue !== undefined && queue.waiting(key) > 0) serveLocal(key);
  };

  // On a shared store: the first waiter of a key asks again, backing off, until served or gone.
  /** Per key being polled: the pause before its next refused retry. */
  const polls = new Map<string, { pauseMs: number }>();
  const poll = (key: string, state: { pauseMs: number }, afterMs: number): void => {
    setTimeout(() => void tryFirst(key, state), afterMs).unref();
  };
  const tryFirst = async (key: string, state: { pauseMs: number }): Promise<void> => {
    const line = queue as WaitQueue;
    if (line.waiting(key) === 0) return void polls.delete(key);
    // A broken clock is the one way acquire rejects: the waiters then wait out maxWaitMs.
    const answer = await (remote as NonNullable<typeof remote>).acquire(key).catch(() => undefined);
    if (answer?.reason === 'store-unavailable') {
      // 'fail-closed': the store is away, and every waiter of the key is told so now, as a new
      // request would be, rather than at its maxWaitMs.
      for (let head = line.shift(key); head !== undefined; head = line.shift(key)) {
        const waitedMs = performance.now() - head.since;
        head.settle(refused(key, answer.reason, 0, waitedMs, answer.degraded, answer.retryAfterMs));
      }
      return void polls.delete(key);
    }
    const grant = answer?.grant;
    if (answer !== undefined && grant !== undefined) {
      // The first still waiting now: the one asked for may have left meanwhile.
      const head = line.shift(key);
      if (head === undefined) void free(key, grant);
      else head.settle(admitted(key, grant, answer.held, performance.now() - head.since, answer.degraded));
    }
    if (line.waiting(key) === 0) return void polls.delete(key);
    if (grant !== undefined) {
      // Served: the next in line asks at once, and backs off afresh if refused.
      state.pauseMs = POLL_MIN_MS;
      return poll(key, state, 0);
    }
    const pauseMs = state.pauseMs;
    state.pauseMs = Math.min(pauseMs * 2, POLL_MAX_MS);
    poll(key, state, pauseMs);
  };
  /** A permit of `key` may be free: serve its waiters (memory) or have its first ask (shared store). */
  const wake = (key: string): void => {
    if (table !== undefined) return serveLocal(key);
    if (polls.has(key)) return;
    const state = { pauseMs: POLL_MIN_MS * 2 };
    polls.set(key, state);
    poll(key, state, POLL_MIN_MS);
  };

  const wait = (key: string, signal: AbortSignal | undefined): Promise<ConcurrencyDecision> => {
    const line = queue as WaitQueue;
    if (signal?.aborted === true) return Promise.resolve(refused(key, 'cancelled', countOf(key), 0));
    return new Promise((resolve) => {
      const since = performance.now();
      const settle = (decision: ConcurrencyDecision): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (line.size === 0) table?.unwatch(onFreed);
        resolve(decision);
      };
      const waiter: Waiter = { key, since, settle };
      const drop = (reason: ConcurrencyRefusal): void => {
        if (!line.remove(waiter)) return;
        settle(refused(key, reason, countOf(key), performance.now() - since));
        if (table !== undefined) serveLocal(key); // the next may fit where this one waited
      };
      const onAbort = (): void => drop('cancelled');
      if (!line.push(waiter)) return resolve(refused(key, 'queue-full', countOf(key), 0));
      // Not unref'd: a request waiting is work to finish, as a delayed one is (a script's await
      // must settle, not end with the process).
      const timer = setTimeout(() => drop('queue-timeout'), maxWaitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (table !== undefined) table.watch(onFreed);
      else wake(key);
    });
  };

  const checkKey = (key: unknown): void => {
    if (typeof key !== 'string')
      throw new SluiceConfigError('key', key, 'must be a string', 'SLUICE_INVALID_ARGUMENT');
  };
  /** `signal`: an AbortSignal (the controller's `.signal`), checked before anything waits. */
  const signalOf = (options: AcquireOptions | undefined): AbortSignal | undefined => {
    const signal: unknown = options?.signal;
    if (signal === undefined || signal instanceof AbortSignal) return signal;
    const like = signal as Partial<AbortSignal> | null;
    if (
      typeof like === 'object' &&
      like !== null &&
      typeof like.aborted === 'boolean' &&
      typeof like.addEventListener === 'function' &&
      typeof like.removeEventListener === 'function'
    )
      return like as AbortSignal;
    throw new SluiceConfigError(
      'signal',
      signal,
      "expected an AbortSignal (an AbortController's .signal)",
      'SLUICE_INVALID_ARGUMENT',
    );
  };
  /** In memory: the answer now, or `undefined` when the request must wait in the queue. */
  const decideLocal = (key: string, local: PermitTable): ConcurrencyDecision | undefined => {
    if (queue !== undefined && queue.waiting(key) > 0) return undefined; // no one cuts in line
    const taken = local.take(key, max);
    if (taken >= 0) return admitted(key, local, taken, 0, undefined);
    return queue === undefined ? refused(key, 'limited', max, 0) : undefined;
  };

  const limiter: ConcurrencyLimiter = {
    max,
    name: resolved.name,
    prefix: resolved.prefix,
    queued: queue !== undefined,
    acquire(key, acquireOptions) {
      checkKey(key);
      const signal = signalOf(acquireOptions);
      if (table !== undefined) return Promise.resolve(decideLocal(key, table) ?? wait(key, signal));
      if (queue !== undefined && queue.waiting(key) > 0) return wait(key, signal);
      return (remote as NonNullable<typeof remote>).acquire(key).then((answer) => {
        const { grant, held, degraded } = answer;
        if (grant !== undefined) return admitted(key, grant, held, 0, degraded);
        if (queue === undefined || answer.reason === 'store-unavailable')
          return refused(key, answer.reason ?? 'limited', held, 0, degraded, answer.retryAfterMs);
        return wait(key, signal);
      });
    },
    acquireSync(key) {
      checkKey(key);
      return table === undefined ? undefined : decideLocal(key, table);
    },
    inFlight(key) {
      checkKey(key);
      return table === undefined
        ? (remote as NonNullable<typeof remote>).inFlight(key)
        : Promise.resolve(table.count(key));
    },
    stats() {
      return { inFlight: holding, queued: queue?.size ?? 0 };
    },
    on(event, listener) {
      events.on(event, listener);
      return limiter;
    },
    off(event, listener) {
      events.off(event, listener);
      return limiter;
    },
  };
  metrics?.watch?.(limiter);
  return limiter;
}
