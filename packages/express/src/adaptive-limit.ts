import type { AdaptiveDecision, ConcurrencyDecision } from '@sluice/core';
import {
  createHttpAdaptiveLimiter,
  createHttpConcurrencyLimiter,
  type AdaptiveLimitOptions as CoreAdaptiveOptions,
  type ConcurrencyLimitOptions as CoreConcurrencyOptions,
  type DecisionFallback,
} from '@sluice/core/adapter';
import type { Request, RequestHandler, Response } from 'express';
import { gateOf, middlewareOf } from './gate';

/** A fallback handler for {@link adaptiveLimit}: replies in place of the 503, with the decision at hand. */
export type ExpressAdaptiveFallback = DecisionFallback<Request, Response, AdaptiveDecision>;

/** Options of {@link adaptiveLimit} (see core's `AdaptiveLimitOptions`), with Express's `req` in callbacks. */
export type AdaptiveLimitOptions = CoreAdaptiveOptions<Request, ExpressAdaptiveFallback>;

/**
 * Express middleware (Express 4 and 5) that protects the instance from overload: the requests in
 * flight follow the latency measured, and `shares` keep each priority its part. The permit goes
 * back once the handler has ended its response or the connection closed.
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

/** A fallback handler for {@link concurrencyLimit}: replies in place of the refusal, with the decision at hand. */
export type ExpressConcurrencyFallback = DecisionFallback<Request, Response, ConcurrencyDecision>;

/** Options of {@link concurrencyLimit} (see core's `ConcurrencyLimitOptions`), with Express's `req` in callbacks. */
export type ConcurrencyLimitOptions = CoreConcurrencyOptions<Request, ExpressConcurrencyFallback>;

/**
 * Express middleware (Express 4 and 5) that caps requests in flight per key (nginx `limit_conn`).
 * The permit goes back exactly once, when the handler has ended its response or the connection
 * closed (a throw, no answer, a client gone). Put it after `rateLimit` to use both on a route.
 *
 * @param options - `max` and the rest (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * import { concurrencyLimit } from '@sluice/express';
 *
 * app.post('/checkout', concurrencyLimit({ key: '$http_user_id', max: 1 }), checkout); // one checkout per user at a time
 * app.use(concurrencyLimit({ key: 'all', max: 500, queue: { maxWaitMs: 2000 } }));    // protect the backend
 * ```
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): RequestHandler {
  const limit = createHttpConcurrencyLimiter<Request, ExpressConcurrencyFallback>(options);
  return middlewareOf(gateOf(limit), 'sluiceConcurrencyLimit');
}
