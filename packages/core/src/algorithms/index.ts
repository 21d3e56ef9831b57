import type { AlgorithmName, Policy } from '../types';
import { fixedWindow, type FixedWindowState } from './fixed-window';
import { gcra, type GcraState } from './gcra';
import { leakyBucket, type LeakyBucketState } from './leaky-bucket';
import { slidingLog, type SlidingLogState } from './sliding-log';
import { slidingWindow, type SlidingWindowState } from './sliding-window';
import type { Algorithm, Step } from './step';
import { tokenBucket, type TokenBucketState } from './token-bucket';
import { warmUp } from './warm-up';

/** The state each algorithm keeps per key. */
export interface AlgorithmStates {
  gcra: GcraState;
  'token-bucket': TokenBucketState;
  'leaky-bucket': LeakyBucketState;
  'fixed-window': FixedWindowState;
  'sliding-window': SlidingWindowState;
  'sliding-log': SlidingLogState;
}

/** Every algorithm by name; a name without its implementation fails the type check. */
export const algorithms: { readonly [K in AlgorithmName]: Algorithm<AlgorithmStates[K]> } = {
  gcra,
  'token-bucket': tokenBucket,
  'leaky-bucket': leakyBucket,
  'fixed-window': fixedWindow,
  'sliding-window': slidingWindow,
  'sliding-log': slidingLog,
};

export type { Algorithm, Step } from './step';
export type {
  FixedWindowState,
  GcraState,
  LeakyBucketState,
  SlidingLogState,
  SlidingWindowState,
  TokenBucketState,
};

/** Runs the policy's algorithm on a stored state; stores keep states opaque, so this is the one cast. */
export function runStep(state: unknown, policy: Policy, nowMs: number, cost: number): Step<unknown> {
  // `warmup` replaces the rate algorithm's step with Guava's warming one (its own state).
  const algorithm = policy.warmupMs > 0 ? warmUp : algorithms[policy.algorithm];
  return (algorithm as Algorithm<unknown>).step(state, policy, nowMs, cost);
}
