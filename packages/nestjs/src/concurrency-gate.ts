import { createHttpConcurrencyLimiter, decideAndWrite, type ConcurrencyLimitOptions } from '@sluice/core';
import type { Fallback, Platform, Verdict } from './platforms';

// Read once: a CommonJS build reads an import through getters at each use (per request here).
const decideWrite = decideAndWrite;

/** Runs one limit for a request: `true` when it may go on. */
export type Gate = (request: unknown, response: unknown) => Verdict;

/**
 * The gate of one `@ConcurrencyLimit`: takes a permit (or waits for one), tied to the close of
 * Node's response under the platform's, then writes what core decided. Built once, at start.
 *
 * @param options - the decorator's options
 * @param scope - where the decorator is (`Controller` or `Controller.method`): its permits' prefix unless one is given
 * @param platform - the platform, looked up at the first request if the module never started
 */
export function concurrencyGate(
  options: ConcurrencyLimitOptions<unknown, Fallback>,
  scope: string,
  platform: () => Platform,
): Gate {
  // As @RateLimit's buckets: two decorators on one shared store keep their own counts.
  const own = options.limiter === undefined && options.prefix === undefined;
  const limit = createHttpConcurrencyLimiter(own ? { ...options, prefix: `sluice:${scope}` } : options);
  return (request, response) => {
    const on = platform();
    return decideWrite(limit, request, response, on.http(request), on.raw(response), on.apply);
  };
}
