import type { AdaptiveDecision } from '@sluice/core';
import { createHttpAdaptiveLimiter, type AdaptiveLimitOptions as CoreOptions } from '@sluice/core/adapter';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { gateOf, hookOf } from './gate';

/** A fallback handler for {@link adaptiveLimit}: sends a reply in place of the 503. */
export type FastifyAdaptiveFallback = (
  request: FastifyRequest,
  reply: FastifyReply,
  decision: AdaptiveDecision,
) => unknown;

/**
 * Options of {@link adaptiveLimit}: `priority`, `shares`, `status`, `fallback`, `skip`, `dryRun`,
 * `name`, `metrics`, the limiter's `algorithm`, `min`, `max`, `queue`, `eventLoop`, … or a ready
 * `limiter`, with Fastify's `request` in callbacks.
 */
export type AdaptiveLimitOptions = CoreOptions<FastifyRequest, FastifyAdaptiveFallback>;

/**
 * A Fastify hook (Fastify 4 and 5) that protects the instance from overload: the number of
 * requests in flight follows the latency it measures, shrinks at once when the event loop lags,
 * and `shares` keep each priority its part. Above the limit a request waits briefly or gets a
 * `503` with `Retry-After`. The permit goes back exactly once, when the handler has ended its
 * response or the connection closes first. Add it as an `onRequest` hook for the whole app
 * (refusals then cost the least), or per route.
 *
 * @param options - all optional (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * import { adaptiveLimit } from '@sluice/fastify';
 *
 * app.addHook('onRequest', adaptiveLimit({
 *   priority: (request) => (request.url.startsWith('/checkout') ? 'checkout' : 'browse'),
 *   shares: { checkout: 0.7, browse: 0.3 },
 * }));
 * ```
 */
export function adaptiveLimit(options: AdaptiveLimitOptions = {}): onRequestHookHandler {
  const limit = createHttpAdaptiveLimiter<FastifyRequest, FastifyAdaptiveFallback>(options);
  return hookOf(gateOf(limit), 'sluiceAdaptiveLimit');
}
