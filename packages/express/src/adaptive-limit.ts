import type { AdaptiveDecision } from '@sluice/core';
import {
  createHttpAdaptiveLimiter,
  type AdaptiveLimitOptions as CoreOptions,
  type MaybePromise,
} from '@sluice/core/adapter';
import type { Request, RequestHandler, Response } from 'express';
import { gateOf, middlewareOf } from './gate';

/** A fallback handler for {@link adaptiveLimit}: replies in place of the 503, with the decision at hand. */
export type ExpressAdaptiveFallback = (
  req: Request,
  res: Response,
  decision: AdaptiveDecision,
) => MaybePromise<unknown>;

/**
 * Options of {@link adaptiveLimit}: `priority`, `shares`, `status`, `fallback`, `skip`, `dryRun`,
 * `name`, `metrics`, the limiter's `algorithm`, `min`, `max`, `queue`, `eventLoop`, … or a ready
 * `limiter`, with Express's `req` in callbacks.
 */
export type AdaptiveLimitOptions = CoreOptions<Request, ExpressAdaptiveFallback>;

/**
 * Express middleware (Express 4 and 5) that protects the instance from overload: the number of
 * requests in flight follows the latency it measures (no number to pick), shrinks at once when
 * the event loop lags, and `shares` keep each priority its part. Above the limit a request waits
 * briefly or gets a `503` with `Retry-After`. The permit goes back exactly once, when the
 * handler has ended its response or the connection closes first.
 *
 * @param options - all optional (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * import { adaptiveLimit } from '@sluice/express';
 *
 * app.use(adaptiveLimit({
 *   priority: (req) => (req.path.startsWith('/checkout') ? 'checkout' : 'browse'),
 *   shares: { checkout: 0.7, browse: 0.3 },
 * }));
 * ```
 */
export function adaptiveLimit(options: AdaptiveLimitOptions = {}): RequestHandler {
  const limit = createHttpAdaptiveLimiter<Request, ExpressAdaptiveFallback>(options);
  return middlewareOf(gateOf(limit), 'sluiceAdaptiveLimit');
}
