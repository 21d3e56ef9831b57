import type { AdaptiveDecision } from '@sluice/core';
import {
  createHttpAdaptiveLimiter,
  type AdaptiveLimitOptions as CoreOptions,
  type MaybePromise,
} from '@sluice/core/adapter';
import type { Context, Middleware } from 'koa';
import { gateOf, middlewareOf } from './gate';

/** A fallback handler for {@link adaptiveLimit}: replies in place of the 503 (sets `ctx.status` and `ctx.body`). */
export type KoaAdaptiveFallback = (ctx: Context, decision: AdaptiveDecision) => MaybePromise<unknown>;

/**
 * Options of {@link adaptiveLimit}: `priority`, `shares`, `status`, `fallback`, `skip`, `dryRun`,
 * `name`, `metrics`, the limiter's `algorithm`, `min`, `max`, `queue`, `eventLoop`, … or a ready
 * `limiter`, with Koa's `ctx` in callbacks.
 */
export type AdaptiveLimitOptions = CoreOptions<Context, KoaAdaptiveFallback>;

/**
 * Koa middleware (Koa 2 and 3) that protects the instance from overload: the number of requests
 * in flight follows the latency it measures, shrinks at once when the event loop lags, and
 * `shares` keep each priority its part. Above the limit a request waits briefly or gets a `503`
 * with `Retry-After`. The permit goes back exactly once, when the response has been ended or
 * the connection closes first.
 *
 * @param options - all optional (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * import { adaptiveLimit } from '@sluice/koa';
 *
 * app.use(adaptiveLimit({
 *   priority: (ctx) => (ctx.path.startsWith('/checkout') ? 'checkout' : 'browse'),
 *   shares: { checkout: 0.7, browse: 0.3 },
 * }));
 * ```
 */
export function adaptiveLimit(options: AdaptiveLimitOptions = {}): Middleware {
  const limit = createHttpAdaptiveLimiter<Context, KoaAdaptiveFallback>(options);
  return middlewareOf(gateOf(limit), 'sluiceAdaptiveLimit');
}
