import type { Policy, Receipt } from '../types';
import type { FixedWindowState } from './fixed-window';
import type { GcraState } from './gcra';
import { elapsedSince, MILLI, type LeakyBucketState } from './leaky-bucket';
import type { SlidingLogState } from './sliding-log';
import type { SlidingWindowState } from './sliding-window';
import type { Step } from './step';
import type { TokenBucketState } from './token-bucket';
import { curve, type WarmUpState } from './warm-up';

/**
 * What giving back leaves: the state to keep for `ttlMs`, `'delete'` when the key is back to
 * its initial state, or `undefined` when the state stays exactly as it was.
 */
export type GiveBackStep<S> = { readonly state: S; readonly ttlMs: number } | 'delete' | undefined;

/**
 * Gives back `cost` units of an admission that will not be served: a queued or delayed request
 * whose client left (`limiter.cancel`), or a request a later limit refused (several limits on a
 * route). The buckets and warm-up move their state back; the windows and the sliding log need
 * the admission's {@link Receipt} (without one they give nothing back): a window gives back its
 * count only in the window it counted in, the sliding log removes the entries it added.
 *
 * Each never gives back more than the state still holds: a turn already past is not returned.
 */
export type GiveBack<S> = (
  state: S,
  policy: Policy,
  nowMs: number,
  cost: number,
  receipt?: Receipt,
) => GiveBackStep<S>;

/**
 * GCRA: the TAT moves back by `cost` emission intervals, never before now. With a clock behind
 * the one that wrote the state, it moves back in the state's own frame, never before its last
 * admission: the debt then stays within what a step writes.
 */
export const gcraGiveBack: GiveBack<GcraState> = (state, policy, nowMs, cost) => {
  const { limit: perWindow, windowMs } = policy;
  if (nowMs < state.last) {
    if (state.debt === 0) return undefined;
    const left = Math.max(0, state.debt - cost * windowMs);
    return {
      state: { last: state.last, debt: left },
      ttlMs: state.last - nowMs + Math.ceil(left / perWindow),
    };
  }
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

/** Fixed window: the count goes down in the window the admission counted in, while it is open. */
export const fixedWindowGiveBack: GiveBack<FixedWindowState> = (state, policy, nowMs, cost, receipt) => {
  const { windowMs } = policy;
  if (receipt === undefined || state.start !== receipt.at || nowMs >= state.start + windowMs)
    return undefined;
  const count = state.count - cost;
  // No unit left in the window: as if none had come, the next request opens a new one.
  if (count <= 0) return 'delete';
  return { state: { start: state.start, count }, ttlMs: state.start + windowMs - nowMs };
};

/**
 * Sliding window: the counter of the window the admission counted in goes down — `current`
 * while that window lasts, `previous` in the next one; later, that window no longer counts.
 */
export const slidingWindowGiveBack: GiveBack<SlidingWindowState> = (state, policy, nowMs, cost, receipt) => {
  const { windowMs } = policy;
  if (receipt === undefined) return undefined;
  let { previous, current } = state;
  if (state.start === receipt.at) current = Math.max(0, current - cost);
  else if (state.start === receipt.at + windowMs) previous = Math.max(0, previous - cost);
  else return undefined;
  // As the step's TTL: a window's count matters until two windows after its start (its own
  // start: a clock behind it keeps the state longer, not shorter).
  const span = current > 0 ? 2 * windowMs : previous > 0 ? windowMs : 0;
  const ttlMs = state.start + span - nowMs;
  if (span === 0 || ttlMs <= 0) return 'delete';
  return { state: { start: state.start, previous, current }, ttlMs };
};

/**
 * Sliding log: the admission's entries (time `receipt.at`) leave the log while they still
 * count; the log is trimmed as a write trims it, on its own time (see `slidingLog`).
 */
export const slidingLogGiveBack: GiveBack<SlidingLogState> = (state, policy, nowMs, cost, receipt) => {
  const newest = state.times.length > 0 ? (state.times[state.times.length - 1] as number) : nowMs;
  const cutoff = Math.max(nowMs, newest) - policy.windowMs;
  if (receipt === undefined || receipt.at <= cutoff) return undefined;
  const times: number[] = [];
  let removed = 0;
  for (const time of state.times) {
    if (time <= cutoff) continue;
    if (time === receipt.at && removed < cost) removed++;
    else times.push(time);
  }
  if (removed === 0) return undefined;
  if (times.length === 0) return 'delete';
  return { state: { times }, ttlMs: (times[times.length - 1] as number) + policy.windowMs - nowMs };
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

/**
 * The give-back of any policy's state, given the admission's {@link Receipt}: the windows and
 * the sliding log need it, the others ignore it.
 */
export function giveBackTakenOf(policy: Policy): GiveBack<unknown> {
  const delaying = giveBackOf(policy);
  if (delaying !== undefined) return delaying;
  switch (policy.algorithm) {
    case 'fixed-window':
      return fixedWindowGiveBack as GiveBack<unknown>;
    case 'sliding-window':
      return slidingWindowGiveBack as GiveBack<unknown>;
    default:
      return slidingLogGiveBack as GiveBack<unknown>;
  }
}

const NO_RECEIPT: Receipt = { at: 0, member: 0 };

/**
 * The receipt of an admission that wrote `step.state`: the window's start (fixed and
 * sliding window), the time of the entries (sliding log); none needed by the other algorithms.
 * The memory store names no entries, so `member` is 0 here.
 */
export function receiptOf(policy: Policy, step: Step<unknown>): Receipt {
  if (step.state === undefined || policy.warmupMs > 0) return NO_RECEIPT;
  switch (policy.algorithm) {
    case 'fixed-window':
      return { at: (step.state as FixedWindowState).start, member: 0 };
    case 'sliding-window':
      return { at: (step.state as SlidingWindowState).start, member: 0 };
    case 'sliding-log': {
      // Its entries' time: the log's own, which is `nowMs` unless the clock is behind the log.
      const { times } = step.state as SlidingLogState;
      return { at: times[times.length - 1] as number, member: 0 };
    }
    default:
      return NO_RECEIPT;
  }
}
