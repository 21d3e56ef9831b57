import type { Algorithm } from './step';
import { admitted, costExceedsCapacity, peeked, rejected } from './step';

/**
 * Token-bucket state. `tokens` counts in units of 1/windowMs of a token, so a refill of
 * `limit / windowMs` tokens per ms is exactly `limit` units per ms: integers only, any rate.
 */
export interface TokenBucketState {
  readonly tokens: number;
  /** When `tokens` was last computed, epoch ms. */
  readonly last: number;
}

/**
 * Token bucket with Spring Cloud Gateway `RedisRateLimiter` semantics: replenish rate =
 * `limit / windowMs`, burst capacity = `burst + 1`, requested tokens = `cost`; a new key starts
 * full; refill is continuous and capped at the capacity; time never runs backwards
 * (`max(0, now - last)`). Unlike the gateway, a rejection writes nothing: the refill is a pure
 * function of time, so the decisions are the same without the write.
 */
export const tokenBucket: Algorithm<TokenBucketState> = {
  step(state, policy, nowMs, cost) {
    const { limit: perWindow, windowMs, burst } = policy;
    const limit = burst + 1;
    const capacity = limit * windowMs;
    const elapsed = state === undefined ? 0 : Math.max(0, nowMs - state.last);
    const filled = state === undefined ? capacity : Math.min(capacity, state.tokens + elapsed * perWindow);
    const resetOf = (tokens: number): number => Math.ceil((capacity - tokens) / perWindow);
    if (cost > limit)
      return costExceedsCapacity(limit, Math.max(0, Math.floor(filled / windowMs)), resetOf(filled));

    const requested = cost * windowMs;
    // A queue lets the bucket go into debt by maxWaitMs of refill: the request waits for it.
    const queue = policy.maxWaitMs * perWindow;
    const remainingOf = (tokens: number): number => (tokens > 0 ? Math.floor(tokens / windowMs) : 0);
    if (filled - requested < -queue) {
      return rejected(
        limit,
        remainingOf(filled),
        resetOf(filled),
        Math.ceil((requested - queue - filled) / perWindow),
      );
    }
    const tokens = filled - requested;
    const resetMs = resetOf(tokens);
    if (cost === 0) return peeked(limit, remainingOf(tokens), resetMs);
    const delayMs = tokens < 0 ? Math.ceil(-tokens / perWindow) : 0;
    return admitted(limit, remainingOf(tokens), resetMs, delayMs, { tokens, last: nowMs }, resetMs);
  },
};
