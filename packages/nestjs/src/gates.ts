import {
  createHttpAdaptiveLimiter,
  createHttpConcurrencyLimiter,
  decideAndWrite,
  type AdaptiveLimitOptions,
  type ConcurrencyLimitOptions,
  type HttpDecider,
} from '@sluice/core/adapter';
import type { Fallback, Outcome, Platform, Verdict } from './platforms';

// Read once: a CommonJS build reads an import through getters at each use (per request here).
const decideWrite = decideAndWrite;

/** Runs one limit for a request: `true` when it may go on. */
export type Gate = (request: unknown, response: unknown) => Verdict;

/**
 * The gate of a limit from core (a rate limit or a concurrency limit) on the platform Nest runs
 * on: decides, then writes the outcome the platform's way.
 *
 * @param decider - the limit
 * @param platform - the platform, looked up at the first request if the module never started
 */
export function platformGate(decider: HttpDecider<unknown, Outcome>, platform: () => Platform): Gate {
  return (request, response) => {
    const on = platform();
    return decideWrite(decider, request, response, on.http(request), on.raw(response), on.apply);
  };
}

/**
 * The gate of one `@ConcurrencyLimit`: takes a permit (or waits for one), tied to the end (or
 * close) of Node's response under the platform's, then writes what core decided. Built once, at start.
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
  return platformGate(limit, platform);
}

/**
 * The gate of one adaptive limit (`@AdaptiveLimit`, or the module's `adaptive`): a permit tied to
 * the end (or close) of Node's response, as `@ConcurrencyLimit`'s. Built once, at start.
 */
export function adaptiveGate(
  options: AdaptiveLimitOptions<unknown, Fallback>,
  platform: () => Platform,
): Gate {
  return platformGate(createHttpAdaptiveLimiter(options), platform);
}
