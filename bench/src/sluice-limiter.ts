import { createLimiter, SluiceConfigError, type Limiter, type LimiterOptions } from '@sluice/core';

/**
 * Whether this core takes the `blockCache` option (DESIGN: with a shared store, a key known to be
 * limited until T is rejected locally until T). Older cores reject unknown options at creation.
 */
export function supportsBlockCache(): boolean {
  try {
    createLimiter({ rate: '1r/s', blockCache: true } as LimiterOptions);
    return true;
  } catch (error) {
    if (error instanceof SluiceConfigError) return false;
    throw error;
  }
}

/**
 * A limiter and the decisions it made without its store: a store error or a timeout (`timeoutMs`,
 * 50 ms by default), or an open circuit after them. Any is a flaw of the run: such decisions come
 * from the insurance store, not from the store under test.
 */
export interface CountedLimiter {
  readonly limiter: Limiter;
  /** `fallback` events so far. */
  withoutStore(): number;
}

/**
 * With a shared store, each decision waits up to this long for Redis, as the peers do (they have
 * no timeout at all). sluice's default `timeoutMs: 50` turns a Redis starved by the load
 * generator on this 2-core machine into insurance decisions, which measure the insurance store,
 * not Redis (they are counted, and any marks the figure invalid).
 */
export const SHARED_STORE_TIMEOUT_MS = 1000;

/**
 * createLimiter with `blockCache: true` and `timeoutMs: SHARED_STORE_TIMEOUT_MS` for shared stores
 * when the core has them, counting fallbacks.
 */
export function countedLimiter(options: LimiterOptions, { shared }: { shared: boolean }): CountedLimiter {
  const limiter = createLimiter(
    shared && supportsBlockCache()
      ? ({ ...options, blockCache: true, timeoutMs: SHARED_STORE_TIMEOUT_MS } as LimiterOptions)
      : options,
  );
  let fallbacks = 0;
  limiter.on('fallback', () => fallbacks++);
  return { limiter, withoutStore: () => fallbacks };
}
