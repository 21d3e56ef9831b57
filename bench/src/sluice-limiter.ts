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

/** createLimiter with `blockCache: true` for shared stores when the core has it, counting fallbacks. */
export function countedLimiter(options: LimiterOptions, { shared }: { shared: boolean }): CountedLimiter {
  const limiter = createLimiter(
    shared && supportsBlockCache() ? ({ ...options, blockCache: true } as LimiterOptions) : options,
  );
  let fallbacks = 0;
  limiter.on('fallback', () => fallbacks++);
  return { limiter, withoutStore: () => fallbacks };
}
