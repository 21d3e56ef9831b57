import type { Policy } from '../types';
import type { GcraState } from './gcra';
import { elapsedSince, MILLI, type LeakyBucketState } from './leaky-bucket';
import type { TokenBucketState } from './token-bucket';
import { curve, type WarmUpState } from './warm-up';

/**
 * What giving back leaves: the state to keep for `ttlMs`, `'delete'` when the key is back to
 * its initial state, or `undefined` when the state stays exactly as it was.
 */
export type GiveBackStep<S> = { readonly state: S; readonly ttlMs: number } | 'delete' | undefined;

/**
 * Gives back `cost` units of an admission that will not be served (a queued or delayed request
 * whose client left), so that later requests may use its turn. Only the algorithms that delay
 * admissions have one (a queue on `gcra` or `token-bucket`, the leaky bucket without `nodelay`,
 * `warmup`); a window counts every admitted arrival and gives nothing back.
 *
 * Each never gives back more than the state still holds: a turn already past is not returned.
 */
export type GiveBack<S> = (state: S, policy: Policy, nowMs: number, cost: number) => GiveBackStep<S>;

/** GCRA: the TAT moves back by `cost` emission intervals, never before now. */
export const gcraGiveBack: GiveBack<GcraState> = (state, policy, nowMs, cost) => {
  const { limit: perWindow, windowMs } = policy;
  const current = Math.max(0, state.debt - (nowMs - state.last) * perWindow);
  if (current === 0) return undefined;
  const debt = Math.max(0, current - cost * windowMs);
  if (debt === 0) return 'delete';
  return { state: { last: nowMs, debt }, ttlMs: Math.ceil(debt / perWindow) };
};

/** Token bucket: `cost` tokens go back in, up to the capacity (a queue's debt is paid back first). */
export const tokenBucketGiveBack: GiveBack<TokenBucketState> = (state, policy, nowMs, cost) => {
  const { limit: perWindow, windowMs, burst } = policy;
  const capacity = (burst + 1) * windowMs;
  const filled = Math.min(capacity, state.tokens + Math.max(0, nowMs - state.last) * perWindow);
  if (filled === capacity) return undefined;
  const tokens = Math.min(capacity, filled + cost * windowMs);
  if (tokens === capacity) return 'delete';
  return { state: { tokens, last: nowMs }, ttlMs: Math.ceil((capacity - tokens) / perWindow) };
};

/** Leaky bucket (nginx): `cost` requests leave the bucket; `last` moves as a request's would. */
export const leakyBucketGiveBack: GiveBack<LeakyBucketState> = (state, policy, nowMs, cost) => {
  const { limit: perWindow, windowMs } = policy;
  const elapsed = elapsedSince(state.last, nowMs);
  const level = state.excess - Math.floor((elapsed * perWindow * MILLI) / windowMs);
  // Below -MILLI the bucket is as empty as a new key's: nothing is held to give back.
  if (level + MILLI <= 0) return undefined;
  const excess = level - cost * MILLI;
  if (excess + MILLI <= 0) return 'delete';
  const last = elapsed !== 0 ? nowMs : state.last;
  const drainMs = Math.ceil(((excess + MILLI) * windowMs) / (perWindow * MILLI));
  return { state: { excess, last }, ttlMs: drainMs + Math.max(0, last - nowMs) };
};

/**
 * Warm-up (Guava): the next free time moves back by the stable interval per unit. A turn may
 * have cost more (a cold permit), so this gives back at most what the request took.
 */
export const warmUpGiveBack: GiveBack<WarmUpState> = (state, policy, nowMs, cost) => {
  if (state.next <= nowMs) return undefined;
  const { stable, maxPermits, coolDown } = curve(policy, policy.warmupMs);
  const next = Math.max(nowMs, state.next - stable * cost);
  // As the step's TTL: until the next free time has passed and the stored permits refilled.
  const ttlMs = Math.ceil(next - nowMs + (maxPermits - state.stored) * coolDown) + 1;
  return { state: { stored: state.stored, next }, ttlMs };
};

/** The give-back of a policy's state, or `undefined` for the algorithms that never delay. */
export function giveBackOf(policy: Policy): GiveBack<unknown> | undefined {
  if (policy.warmupMs > 0) return warmUpGiveBack as GiveBack<unknown>;
  switch (policy.algorithm) {
    case 'gcra':
      return gcraGiveBack as GiveBack<unknown>;
    case 'token-bucket':
      return tokenBucketGiveBack as GiveBack<unknown>;
    case 'leaky-bucket':
      return leakyBucketGiveBack as GiveBack<unknown>;
    default:
      return undefined;
  }
}
