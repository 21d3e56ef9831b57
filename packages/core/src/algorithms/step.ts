import type { Policy, Verdict } from '../types';

/**
 * The outcome of one algorithm step.
 *
 * `state` is what the store must now keep for the key, with a time-to-live of `ttlMs`; it is
 * `undefined` when the stored state must be left exactly as it was (a rejection, a peek of cost 0).
 * After `ttlMs` without requests the key is back to its initial state, so the store may forget it.
 */
export interface Step<S> {
  readonly verdict: Verdict;
  readonly state: S | undefined;
  /** Time-to-live of `state` in ms, an integer >= 1 when `state` is set. */
  readonly ttlMs: number;
}

/**
 * A rate-limiting algorithm: one pure function from (stored state, policy, time, cost) to a
 * verdict and the next state. The memory store runs it as is; the Redis store runs the same
 * logic as a Lua script, and a differential test keeps the two equal.
 */
export interface Algorithm<S> {
  /**
   * @param state - the key's stored state, or `undefined` for a key never seen (or expired)
   * @param policy - the normalized policy
   * @param nowMs - the current time, epoch milliseconds (integer)
   * @param cost - units this request takes: an integer >= 0; 0 only looks (a peek)
   */
  step(state: S | undefined, policy: Policy, nowMs: number, cost: number): Step<S>;
}

/** The rejection of a cost that can never pass, whatever the state: finite numbers, no retry. */
export function costExceedsCapacity(limit: number, remaining: number, resetMs: number): Step<never> {
  return {
    verdict: {
      allowed: false,
      limit,
      remaining,
      resetMs,
      retryAfterMs: 0,
      delayMs: 0,
      reason: 'cost-exceeds-capacity',
    },
    state: undefined,
    ttlMs: 0,
  };
}

/** A rejection that leaves the state as it is. */
export function rejected(
  limit: number,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
): Step<never> {
  return {
    verdict: { allowed: false, limit, remaining, resetMs, retryAfterMs, delayMs: 0, reason: 'limited' },
    state: undefined,
    ttlMs: 0,
  };
}

/** An admission that stores `state` for `ttlMs`. */
export function admitted<S>(
  limit: number,
  remaining: number,
  resetMs: number,
  delayMs: number,
  state: S,
  ttlMs: number,
): Step<S> {
  return { verdict: { allowed: true, limit, remaining, resetMs, retryAfterMs: 0, delayMs }, state, ttlMs };
}

/** The answer to a request of cost 0: admitted, and nothing changes. */
export function peeked(limit: number, remaining: number, resetMs: number): Step<never> {
  return {
    verdict: { allowed: true, limit, remaining, resetMs, retryAfterMs: 0, delayMs: 0 },
    state: undefined,
    ttlMs: 0,
  };
}
