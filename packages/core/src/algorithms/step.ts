import type { Policy, RejectReason, Verdict } from '../types';

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

/**
 * The registers of one decision of an algorithm whose state is at most three numbers: the key's
 * state and the time go in, the verdict and the next state come out. The memory store keeps one
 * per store and reuses it, so deciding allocates nothing; every field is a number, a boolean or
 * the reason, whatever the algorithm, so the code around it sees one hidden class (objects built
 * per algorithm, with fields that were small integers for one and doubles for another, made V8
 * migrate every object between hidden classes: 4× slower decisions in a process using several
 * algorithms).
 */
export class Frame {
  /** In: whether the key has state (in `s0`–`s2`); `false` for a key never seen, or expired. */
  live = false;
  /** In: the current time, epoch ms (integer). */
  nowMs = 0;
  /** In: the key's state; out, when `write` is set: the next state. Each algorithm names them. */
  s0 = 0;
  s1 = 0;
  s2 = 0;
  /** Out: the next state must be stored, for `ttlMs` (an integer >= 1). */
  write = false;
  ttlMs = 0;
  /** Out: the verdict's fields, as in {@link Verdict}. */
  allowed = false;
  limit = 0;
  remaining = 0;
  resetMs = 0;
  retryAfterMs = 0;
  delayMs = 0;
  reason: RejectReason | undefined = undefined;
}

/**
 * An algorithm whose state is at most three numbers. `decide` is the algorithm, and `step` is
 * derived from it ({@link numericAlgorithm}), so the store's hot path and the reference model the
 * Lua scripts are tested against are one and the same code.
 */
export interface NumericAlgorithm<S> extends Algorithm<S> {
  /**
   * One step in place: reads `frame.live`, `frame.nowMs` and the state in `s0`–`s2`, writes the
   * verdict and, when it admits, the next state.
   */
  decide(frame: Frame, policy: Policy, cost: number): void;
}

/**
 * Builds the object-state `step` of an algorithm from its in-place `decide`, given how its state
 * object maps to `s0`–`s2`: `load` puts a state in a frame, `stateOf` reads the next one out.
 */
export function numericAlgorithm<S>(
  load: (state: S, frame: Frame) => void,
  stateOf: (frame: Frame) => S,
  decide: NumericAlgorithm<S>['decide'],
): NumericAlgorithm<S> {
  // Steps are synchronous and `decide` calls nothing back: one frame serves every step.
  const frame = new Frame();
  return {
    decide,
    step(state, policy, nowMs, cost) {
      frame.nowMs = nowMs;
      frame.live = state !== undefined;
      frame.s0 = frame.s1 = frame.s2 = 0;
      if (state !== undefined) load(state, frame);
      decide(frame, policy, cost);
      const verdict = verdictOf(frame);
      return frame.write
        ? { verdict, state: stateOf(frame), ttlMs: frame.ttlMs }
        : { verdict, state: undefined, ttlMs: 0 };
    },
  };
}

/**
 * The verdict in a frame, as a new object. Always the same fields in the same order (`reason`
 * too, `undefined` when admitted): one hidden class for every verdict of every algorithm.
 */
export function verdictOf(frame: Frame): Verdict {
  return verdict(
    frame.allowed,
    frame.limit,
    frame.remaining,
    frame.resetMs,
    frame.retryAfterMs,
    frame.delayMs,
    frame.reason,
  );
}

/**
 * Every verdict of every algorithm, built by one constructor. A class, not an object literal: when
 * a number field first held small integers and then a double, V8 moved literal-built verdicts to a
 * new hidden class but kept building them with the old one, and migrated each on its first read
 * (3× slower decisions, in one process out of two). A constructor's objects follow the update.
 */
class AlgorithmVerdict implements Verdict {
  constructor(
    readonly allowed: boolean,
    readonly limit: number,
    readonly remaining: number,
    readonly resetMs: number,
    readonly retryAfterMs: number,
    readonly delayMs: number,
    readonly reason: RejectReason | undefined,
  ) {}
}

export function verdict(
  allowed: boolean,
  limit: number,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
  delayMs: number,
  reason: RejectReason | undefined,
): Verdict {
  return new AlgorithmVerdict(allowed, limit, remaining, resetMs, retryAfterMs, delayMs, reason);
}

/** Admits: the algorithm has put the next state in `s0`–`s2`, to keep for `ttlMs`. */
export function admit(
  frame: Frame,
  limit: number,
  remaining: number,
  resetMs: number,
  delayMs: number,
  ttlMs: number,
): void {
  answer(frame, true, limit, remaining, resetMs, 0, undefined, delayMs, ttlMs);
}

/** Rejects, leaving the state as it is. */
export function reject(
  frame: Frame,
  limit: number,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
): void {
  answer(frame, false, limit, remaining, resetMs, retryAfterMs, 'limited', 0, 0);
}

/** Rejects a cost that can never pass, whatever the state: finite numbers, no retry. */
export function rejectCost(frame: Frame, limit: number, remaining: number, resetMs: number): void {
  answer(frame, false, limit, remaining, resetMs, 0, 'cost-exceeds-capacity', 0, 0);
}

/** Answers a request of cost 0: admitted, and nothing changes. */
export function peek(frame: Frame, limit: number, remaining: number, resetMs: number): void {
  answer(frame, true, limit, remaining, resetMs, 0, undefined, 0, 0);
}

function answer(
  frame: Frame,
  allowed: boolean,
  limit: number,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
  reason: RejectReason | undefined,
  delayMs: number,
  /** The next state's time-to-live: 0 leaves the state as it is. */
  ttlMs: number,
): void {
  frame.write = ttlMs > 0;
  frame.ttlMs = ttlMs;
  frame.allowed = allowed;
  frame.limit = limit;
  frame.remaining = remaining;
  frame.resetMs = resetMs;
  frame.retryAfterMs = retryAfterMs;
  frame.delayMs = delayMs;
  frame.reason = reason;
}

// Algorithms whose state is not a few numbers (sliding-log's list, warm-up) return steps.

/** The rejection of a cost that can never pass, whatever the state: finite numbers, no retry. */
export function costExceedsCapacity(limit: number, remaining: number, resetMs: number): Step<never> {
  return {
    verdict: verdict(false, limit, remaining, resetMs, 0, 0, 'cost-exceeds-capacity'),
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
    verdict: verdict(false, limit, remaining, resetMs, retryAfterMs, 0, 'limited'),
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
  return { verdict: verdict(true, limit, remaining, resetMs, 0, delayMs, undefined), state, ttlMs };
}

/** The answer to a request of cost 0: admitted, and nothing changes. */
export function peeked(limit: number, remaining: number, resetMs: number): Step<never> {
  return { verdict: verdict(true, limit, remaining, resetMs, 0, 0, undefined), state: undefined, ttlMs: 0 };
}
