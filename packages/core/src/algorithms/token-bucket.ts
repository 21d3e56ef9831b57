import { admit, numericAlgorithm, peek, reject, rejectCost, type NumericAlgorithm } from './step';

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
export const tokenBucket: NumericAlgorithm<TokenBucketState> = numericAlgorithm(
  (state, frame) => {
    frame.s0 = state.tokens;
    frame.s1 = state.last;
  },
  (frame) => ({ tokens: frame.s0, last: frame.s1 }),
  function tokenBucketStep(frame, policy, cost) {
    const { nowMs } = frame;
    const { limit: perWindow, windowMs, burst } = policy;
    const limit = burst + 1;
    const capacity = limit * windowMs;
    const elapsed = frame.live ? Math.max(0, nowMs - frame.s1) : 0;
    const filled = frame.live ? Math.min(capacity, frame.s0 + elapsed * perWindow) : capacity;
    const resetOf = (tokens: number): number => Math.ceil((capacity - tokens) / perWindow);
    if (cost > limit)
      return rejectCost(frame, limit, Math.max(0, Math.floor(filled / windowMs)), resetOf(filled));

    const requested = cost * windowMs;
    // A queue lets the bucket go into debt by maxWaitMs of refill: the request waits for it.
    const queue = policy.maxWaitMs * perWindow;
    const remainingOf = (tokens: number): number => (tokens > 0 ? Math.floor(tokens / windowMs) : 0);
    if (filled - requested < -queue) {
      return reject(
        frame,
        limit,
        remainingOf(filled),
        resetOf(filled),
        Math.ceil((requested - queue - filled) / perWindow),
      );
    }
    const tokens = filled - requested;
    const resetMs = resetOf(tokens);
    if (cost === 0) return peek(frame, limit, remainingOf(tokens), resetMs);
    const delayMs = tokens < 0 ? Math.ceil(-tokens / perWindow) : 0;
    // The tokens as of the later of `last` and now: a request whose clock is behind the last
    // writer's (another app server's `clock`, or a clock stepped back) was credited no refill
    // past `last`, and writing its earlier time would credit that span again at the next request.
    // The key then lives until full counted from there.
    const at = frame.live && frame.s1 > nowMs ? frame.s1 : nowMs;
    frame.s0 = tokens;
    frame.s1 = at;
    admit(frame, limit, remainingOf(tokens), resetMs, delayMs, resetMs + (at - nowMs));
  },
);
