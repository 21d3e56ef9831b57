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

/** A limiter and the decisions it made without its store (timeouts, errors): any is a flaw of the run. */
export interface CountedLimiter {
  readonly limiter: Limiter;
  /** `storeError` events so far. */
  storeErrors(): number;
}

/** createLimiter with `blockCache: true` for shared stores when the core has it, counting store errors. */
export function countedLimiter(options: LimiterOptions, { shared }: { shared: boolean }): CountedLimiter {
  const limiter = createLimiter(
    shared && supportsBlockCache() ? ({ ...options, blockCache: true } as LimiterOptions) : options,
  );
  let errors = 0;
  limiter.on('storeError', () => errors++);
  return { limiter, storeErrors: () => errors };
}
