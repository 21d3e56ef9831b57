import { capacityOf } from '../policy/resolve-policy';
import type { Store, StoreRequest } from '../stores/store';
import type { Policy, Verdict } from '../types';
import { CircuitBreaker } from './circuit-breaker';
import type { DegradedMode, LimiterEmitter } from './events';
import type { ResolvedOnStoreError } from './on-store-error';
import { asError, withTimeout } from './store-errors';

/** Consecutive failures that open the circuit. */
const FAILURE_THRESHOLD = 3;
/** How long an open circuit keeps requests away from the store before one probe is let through. */
const COOLDOWN_MS = 250;
/** Retry-After given by fail-closed: long enough for the circuit to probe again. */
const FAIL_CLOSED_RETRY_MS = 1000;

/** A verdict, and how it was made when not by the store. */
export type GuardedVerdict = Verdict & { readonly degraded?: DegradedMode };

export interface StoreGuardOptions {
  readonly store: Store;
  readonly policy: Policy;
  readonly onStoreError: ResolvedOnStoreError;
  readonly timeoutMs: number;
  readonly events: LimiterEmitter;
  /** Time for the circuit: the limiter's clock when it has one (tests), else `Date.now`. */
  readonly now: () => number;
}

/**
 * Asks a remote store, bounded by `timeoutMs`, behind a circuit breaker; when the store fails,
 * decides by `onStoreError` instead. A request is never held longer than the timeout (plus the
 * insurance store's own time, which is in-process).
 */
export function guardStore(options: StoreGuardOptions): (request: StoreRequest) => Promise<GuardedVerdict> {
  const { store, policy, onStoreError, timeoutMs, events, now } = options;
  const circuit = new CircuitBreaker(FAILURE_THRESHOLD, COOLDOWN_MS, now);
  const insurancePolicy =
    onStoreError.mode === 'insurance' ? dividedPolicy(policy, onStoreError.instances) : policy;

  const degrade = async (request: StoreRequest): Promise<GuardedVerdict> => {
    const capacity = capacityOf(policy);
    if (onStoreError.mode === 'fail-open') {
      return {
        allowed: true,
        limit: capacity,
        remaining: capacity,
        resetMs: 0,
        retryAfterMs: 0,
        delayMs: 0,
        degraded: 'fail-open',
      };
    }
    if (onStoreError.mode === 'fail-closed') {
      const retryAfterMs = Math.max(FAIL_CLOSED_RETRY_MS, circuit.retryInMs());
      return {
        allowed: false,
        limit: capacity,
        remaining: 0,
        resetMs: retryAfterMs,
        retryAfterMs,
        delayMs: 0,
        reason: 'store-unavailable',
        degraded: 'fail-closed',
      };
    }
    const insured = { ...request, policy: insurancePolicy };
    const verdict = onStoreError.store.consumeSync?.(insured) ?? (await onStoreError.store.consume(insured));
    return { ...verdict, degraded: 'insurance' };
  };

  return async (request) => {
    if (!circuit.allow()) return degrade(request);
    try {
      const verdict = await withTimeout(
        Promise.resolve().then(() => store.consume(request)),
        timeoutMs,
      );
      const outage = circuit.succeeded();
      if (outage !== undefined && events.has('storeRecovered')) events.emit('storeRecovered', outage);
      return verdict;
    } catch (error) {
      circuit.failed();
      if (events.has('storeError'))
        events.emit('storeError', { error: asError(error), key: request.key, mode: onStoreError.mode });
      return degrade(request);
    }
  };
}

/** The policy each of `instances` app instances enforces on its own while insured. */
function dividedPolicy(policy: Policy, instances: number): Policy {
  if (instances === 1) return policy;
  if (
    policy.algorithm === 'gcra' ||
    policy.algorithm === 'token-bucket' ||
    policy.algorithm === 'leaky-bucket'
  ) {
    // Same window, 1/n of the rate: n times the window for the same limit, exactly.
    const burst = Math.max(0, Math.floor((policy.burst + 1) / instances) - 1);
    return { ...policy, windowMs: policy.windowMs * instances, burst, delay: Math.min(policy.delay, burst) };
  }
  return { ...policy, limit: Math.max(1, Math.floor(policy.limit / instances)) };
}
