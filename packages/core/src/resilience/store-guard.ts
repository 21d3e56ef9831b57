import type { LimiterMetrics } from '../limiter/metrics-sink';
import { capacityOf } from '../policy/resolve-policy';
import type { JointPart, RulesRequest, Store, StoreRequest } from '../stores/store';
import { takeAlone } from '../stores/take-part';
import type { Policy, Receipt, Verdict } from '../types';
import type { CircuitBreaker } from './circuit-breaker';
import { Circuits } from './circuits';
import type { DegradedMode, LimiterEmitter, StoreErrorEvent } from './events';
import { dividedPolicy, type ResolvedOnStoreError } from './on-store-error';
import { DeadlineList } from './deadline-list';
import { CONSUME_TO, consumesTo } from '../stores/consume-to';
import { guardedCall, sendOf, type CallOutcomes, type Late, type Send } from './guarded-call';
import { asError, StoreTimeoutError, storeErrorScope, type StoreErrorScope } from './store-errors';

export { COOLDOWN_MS, FAILURE_THRESHOLD } from './circuits';
const DONE = Promise.resolve();
/** Retry-After given by fail-closed: long enough for the circuit to probe again. */
export const FAIL_CLOSED_RETRY_MS = 1000;

/** A verdict, and how it was made when not by the store. */
export type GuardedVerdict = Verdict & { readonly degraded?: DegradedMode };

/** Every rule's verdict, and how they were made when not by the store. */
export interface GuardedVerdicts {
  readonly verdicts: readonly Verdict[];
  readonly degraded?: DegradedMode;
}

export interface StoreGuardOptions {
  readonly store: Store;
  readonly onStoreError: ResolvedOnStoreError;
  readonly timeoutMs: number;
  readonly events: LimiterEmitter;
  /** Time for the circuit: the limiter's clock when it has one (tests), else `Date.now`. */
  readonly now: () => number;
  /** Where store calls, errors and health are reported; `undefined` without `metrics`. */
  readonly metrics?: LimiterMetrics | undefined;
}

/** One limiter's part of a request taken alone, guarded, and how to give it back exactly. */
export interface GuardedPart extends GuardedVerdicts {
  /** Gives back what the part took, where it was taken (the store, or the insurance store); absent when nothing can be. */
  readonly giveBack?: () => Promise<unknown>;
}

/**
 * A consume the guard sends: a request, or a lease's fetch of several units for it, which names
 * the request's own cost (`ownCost`) for `onStoreError` to decide: an instance whose store is
 * away is charged in its insurance store what each request asks, not a lease per request.
 */
export type GuardedRequest = StoreRequest & { readonly ownCost?: number };

/** A remote store's calls, bounded and guarded; one circuit per store node (see {@link Circuits}). */
export interface StoreGuard {
  consume(request: GuardedRequest): Promise<GuardedVerdict>;
  /** Several rules at once; the store must have `consumeRules` (and the insurance store too). */
  consumeRules(request: RulesRequest): Promise<GuardedVerdicts>;
  /** Whether the key's circuit is closed: a call made for several limiters at once needs no probe's turn. */
  closed(key: string): boolean;
  /** Records the outcome of a call made for this limiter with others': `error` when it failed. */
  record(key: string, error?: unknown): void;
  /**
   * Settles like `promise`, or rejects with {@link StoreTimeoutError} once it has had the guard's
   * `timeoutMs` and one turn (see {@link DeadlineList}); neither counted nor reported: a call made
   * for several limiters at once, or a give-back, records its own outcome. What `promise`
   * resolves after that goes to `late` (to give back what the store took).
   */
  bound<T>(promise: Promise<T>, late?: (value: T) => void): Promise<T>;
  /**
   * Gives back what a part took in a call that answered after its request was decided without
   * the store (see {@link StoreGuard.bound}'s `late`), with that call's receipts: sent even
   * while the circuit is open, never bounded (the store just answered); a failure is reported.
   */
  giveBackLate(part: JointPart, receipts: readonly Receipt[]): void;
  /** One part of a request with several limits, taken alone with its receipts (see `takeAlone`). */
  takePart(part: JointPart): Promise<GuardedPart>;
  /** A part decided by `onStoreError` (the store just failed a call made for it). */
  degradePart(part: JointPart): Promise<GuardedPart>;
  /**
   * Gives back exactly what a part took in a call made for several limiters at once, with that
   * call's receipts: bounded, its outcome recorded (a refund the store fails is reported and
   * lost, never retried). Never rejects.
   */
  giveBackTaken(part: JointPart, receipts: readonly Receipt[]): Promise<unknown>;
  /** A request decided by `onStoreError` without asking the store (it just failed a call the request waited on). */
  degrade(request: GuardedRequest): Promise<GuardedVerdict>;
}

/**
 * Asks a remote store, bounded by `timeoutMs`, behind a circuit breaker per store node (one for
 * a single Redis, one per master on Cluster: see {@link Circuits}); when the store fails, decides
 * by `onStoreError` instead. A request is never held longer than the timeout and one
 * turn of the event loop (plus the insurance store's own time, which is in-process). The
 * policies are the request's own, so per-key overrides are insured at their own rate.
 *
 * Only the store's own failures count toward opening the circuit (see `storeErrorScope`): an
 * error about one key's data is decided by `onStoreError` for that request alone, and counts as
 * an answer (the store is up). A reply that was waiting while this process was too busy to read
 * it is no failure at all (see {@link DeadlineList}). Every call of the guard is bounded by one
 * {@link DeadlineList}: its calls share `timeoutMs`.
 */
export function guardStore(options: StoreGuardOptions): StoreGuard {
  const { store, onStoreError, timeoutMs, events, now, metrics } = options;
  const circuits = new Circuits({
    nodeOf: store.nodeOf,
    now,
    timeoutMs,
    up: metrics === undefined ? undefined : (up) => metrics.storeUp(up),
  });
  const deadlines = new DeadlineList(timeoutMs);
  const instances = onStoreError.mode === 'insurance' ? onStoreError.instances : 1;
  const divided = new WeakMap<Policy, Policy>();
  const insured = (policy: Policy): Policy => {
    if (instances === 1) return policy;
    let policyPerInstance = divided.get(policy);
    // An override too large to divide (a window of years, thousands of instances) is insured
    // whole; the limiter's own policies are checked at creation (`checkDivisible`).
    if (policyPerInstance === undefined)
      divided.set(policy, (policyPerInstance = dividedPolicy(policy, instances) ?? policy));
    return policyPerInstance;
  };

  const failOpen = (policy: Policy): Verdict => {
    const capacity = capacityOf(policy);
    return { allowed: true, limit: capacity, remaining: capacity, resetMs: 0, retryAfterMs: 0, delayMs: 0 };
  };
  const failClosed = (policy: Policy, circuit: CircuitBreaker): Verdict => {
    const retryAfterMs = Math.max(FAIL_CLOSED_RETRY_MS, circuit.retryInMs());
    return {
      allowed: false,
      limit: capacityOf(policy),
      remaining: 0,
      resetMs: retryAfterMs,
      retryAfterMs,
      delayMs: 0,
      reason: 'store-unavailable',
    };
  };

  const failingClosed = ({ key, policies }: Pick<RulesRequest, 'key' | 'policies'>): Verdict[] => {
    const circuit = circuits.of(key);
    return policies.map((policy) => failClosed(policy, circuit));
  };

  const degrade = async (request: GuardedRequest): Promise<GuardedVerdict> => {
    if (onStoreError.mode === 'fail-open') return { ...failOpen(request.policy), degraded: 'fail-open' };
    if (onStoreError.mode === 'fail-closed')
      return { ...failClosed(request.policy, circuits.of(request.key)), degraded: 'fail-closed' };
    const { ownCost, ...asked } = request;
    const local = { ...asked, cost: ownCost ?? asked.cost, policy: insured(request.policy) };
    const verdict = onStoreError.store.consumeSync?.(local) ?? (await onStoreError.store.consume(local));
    return { ...verdict, degraded: 'insurance' };
  };

  const degradeRules = async (request: RulesRequest): Promise<GuardedVerdicts> => {
    const { mode } = onStoreError;
    if (mode === 'fail-open') return { verdicts: request.policies.map(failOpen), degraded: mode };
    if (mode === 'fail-closed') return { verdicts: failingClosed(request), degraded: mode };
    const local = { ...request, policies: request.policies.map(insured) };
    const insurance = onStoreError.store;
    const verdicts =
      insurance.consumeRulesSync?.(local) ??
      (await (insurance.consumeRules as NonNullable<Store['consumeRules']>)(local));
    return { verdicts, degraded: mode };
  };

  // The store answered for the key (a verdict, or an error about one key's data): any outage of
  // its node is over.
  const answered = (key: string): void => {
    const outage = circuits.answered(key);
    if (outage !== undefined && events.has('storeRecovered')) events.emit('storeRecovered', outage);
  };
  const storeErrorOf = (error: unknown, key: string, scope: StoreErrorScope): StoreErrorEvent => {
    const payload = { error: asError(error), key, mode: onStoreError.mode, scope };
    // Reported only when this process, not the store, made the decision late.
    return error instanceof StoreTimeoutError && error.eventLoopLagMs > 0
      ? { ...payload, eventLoopLagMs: error.eventLoopLagMs }
      : payload;
  };

  // The outcome of a store call: an error about one key's data is an answer too.
  const record = (key: string, error?: unknown): void => {
    if (error === undefined) return answered(key);
    const scope = storeErrorScope(error);
    if (scope === 'store') circuits.failed(key);
    else answered(key);
    if (events.has('storeError')) events.emit('storeError', storeErrorOf(error, key, scope));
  };

  const outcomes: CallOutcomes = {
    deadlines,
    answered(key, startedAt) {
      metrics?.storeCall((performance.now() - startedAt) / 1000);
      answered(key);
    },
    failed(key, error, startedAt) {
      if (metrics !== undefined) reportFailure(metrics, error, startedAt);
      record(key, error);
    },
  };
  const guarded = <R, T>(
    request: R & { readonly key: string },
    send: Send<R, T>,
    fallback: (request: R) => Promise<T>,
    late: Late<R, T>,
  ): Promise<T> => {
    if (!circuits.allow(request.key)) return fallback(request);
    return guardedCall(outcomes, request, send, fallback, late);
  };

  // What a call that answered after its request was decided without the store took goes back:
  // the request must not count twice, in the store and where it was decided. Sent whatever the
  // circuit (the store has just answered) and without a timeout, which would drop it in the
  // store's queue; only a failure is reported. Exact with receipts; a consume's is the store's
  // `giveBack`, for the kinds that have one (see the README, "Failure modes").
  const giveBackLate = (key: string, refund: () => Promise<unknown> | undefined): void => {
    let sent: Promise<unknown> | undefined;
    try {
      sent = refund();
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent?.then(undefined, (error: unknown) => record(key, error));
  };
  const untimed = <Q extends { readonly timeoutMs?: number }>(request: Q): Q => ({
    ...request,
    timeoutMs: undefined,
  });
  const lateConsume = (request: GuardedRequest, verdict: Verdict): void => {
    if (!verdict.allowed || request.cost === 0 || store.giveBack === undefined) return;
    giveBackLate(request.key, () => store.giveBack?.(untimed(request)));
  };
  const lateRules = (request: RulesRequest, { verdicts }: GuardedVerdicts): void => {
    if (!verdicts.every((v) => v.allowed) || request.cost === 0 || store.giveBackRules === undefined) return;
    giveBackLate(request.key, () => store.giveBackRules?.(untimed(request)));
  };
  const lateTaken = (part: JointPart, receipts: readonly Receipt[] | undefined): void => {
    if (receipts === undefined || store.giveBackTaken === undefined) return;
    giveBackLate(part.key, () => store.giveBackTaken?.(untimed(part), receipts));
  };

  // A part given back where it was taken: the store (guarded: a refund that fails is reported
  // and lost, never retried), or the insurance store.
  const giveBackTo = (
    target: Store,
    part: JointPart,
    taken: { receipts?: readonly Receipt[] | undefined },
  ) => {
    const { receipts } = taken;
    if (receipts === undefined || target.giveBackTaken === undefined) return undefined;
    const giveBack = target.giveBackTaken.bind(target);
    // Timed when it is sent, on the limiter's clock when the part was timed by it: a token
    // bucket written since the admission must not count that time again from the admission's.
    const timed = (): JointPart => (part.nowMs === undefined ? part : { ...part, nowMs: now() });
    if (target !== store) return () => giveBack(timed(), receipts);
    return () =>
      circuits.allow(part.key)
        ? deadlines.bound(giveBack(timed(), receipts)).then(
            () => record(part.key),
            (error: unknown) => record(part.key, error),
          )
        : Promise.resolve();
  };
  const degradePart = async (part: JointPart): Promise<GuardedPart> => {
    const { mode } = onStoreError;
    if (mode === 'fail-open') return { verdicts: part.policies.map(failOpen), degraded: mode };
    if (mode === 'fail-closed') return { verdicts: failingClosed(part), degraded: mode };
    const local = { ...part, policies: part.policies.map(insured) };
    const taken = takeAlone(onStoreError.store, local);
    // An insurance store without joint methods decides as usual, with nothing to give back.
    if (taken === undefined && part.policies.length > 1) return degradeRules(part);
    if (taken === undefined)
      return { verdicts: [await degrade({ ...part, policy: part.policies[0] as Policy })], degraded: mode };
    const alone = await taken;
    return {
      verdicts: alone.verdicts,
      degraded: mode,
      giveBack: giveBackTo(onStoreError.store, local, alone),
    };
  };
  const takePart = async (part: JointPart): Promise<GuardedPart> => {
    if (!circuits.allow(part.key)) return degradePart(part);
    const startedAt = metrics === undefined ? 0 : performance.now();
    try {
      // A store that throws instead of rejecting is a failure like any other.
      const alone = await deadlines.bound(
        Promise.resolve().then(() => takeAlone(store, part) as NonNullable<ReturnType<typeof takeAlone>>),
        (late) => lateTaken(part, late.receipts),
      );
      metrics?.storeCall((performance.now() - startedAt) / 1000);
      record(part.key);
      return { verdicts: alone.verdicts, giveBack: giveBackTo(store, part, alone) };
    } catch (error) {
      if (metrics !== undefined) reportFailure(metrics, error, startedAt);
      record(part.key, error);
      return degradePart(part);
    }
  };

  // A store that throws instead of rejecting is a failure like any other (caught by `guarded`).
  // sluice's own remote store tells the call its outcome directly (see CONSUME_TO).
  const consume: Send<StoreRequest, Verdict> = consumesTo(store)
    ? (request, to) => store[CONSUME_TO](request, to)
    : sendOf((request) => store.consume(request));
  const consumeRules = sendOf((request: RulesRequest): Promise<GuardedVerdicts> =>
    (store.consumeRules as NonNullable<Store['consumeRules']>)
      .call(store, request)
      .then((verdicts) => ({ verdicts })),
  );
  return {
    consume: (request) => guarded(request, consume, degrade, lateConsume),
    consumeRules: (request) => guarded(request, consumeRules, degradeRules, lateRules),
    closed: (key) => circuits.of(key).allowsAll(),
    record,
    bound: (promise, late) => deadlines.bound(promise, late),
    giveBackLate: lateTaken,
    takePart,
    degradePart,
    giveBackTaken: (part, receipts) => giveBackTo(store, part, { receipts })?.() ?? DONE,
    degrade,
  };
}

function reportFailure(metrics: LimiterMetrics, error: unknown, startedAt: number): void {
  metrics.storeCall((performance.now() - startedAt) / 1000);
  metrics.storeError(error instanceof StoreTimeoutError ? 'timeout' : 'error');
}
