import type { AdaptiveDecision, ConcurrencyDecision } from '@sluice/core';
import {
  createHttpAdaptiveLimiter,
  createHttpConcurrencyLimiter,
  type AdaptiveLimitOptions as CoreAdaptiveOptions,
  type ConcurrencyLimitOptions as CoreConcurrencyOptions,
  type DecisionFallback,
} from '@sluice/core/adapter';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { gateOf, hookOf } from './gate';

/** A fallback handler for {@link adaptiveLimit}: sends a reply in place of the 503. */
export type FastifyAdaptiveFallback = DecisionFallback<FastifyRequest, FastifyReply, AdaptiveDecision>;

/** Options of {@link adaptiveLimit} (see core's `AdaptiveLimitOptions`), with Fastify's `request` in callbacks. */
export type AdaptiveLimitOptions = CoreAdaptiveOptions<FastifyRequest, FastifyAdaptiveFallback>;

/**
 * A Fastify hook (Fastify 4 and 5) that protects the instance from overload: the requests in
 * flight follow the latency measured, and `shares` keep each priority its part. The permit goes
 * back once the handler has ended its response or the connection closed. Add it as an
 * `onRequest` hook for the whole app (refusals then cost the least), or per route.
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

/** A fallback handler for {@link concurrencyLimit}: sends a reply in place of the refusal. */
export type FastifyConcurrencyFallback = DecisionFallback<FastifyRequest, FastifyReply, ConcurrencyDecision>;

/** Options of {@link concurrencyLimit} (see core's `ConcurrencyLimitOptions`), with Fastify's `request` in callbacks. */
export type ConcurrencyLimitOptions = CoreConcurrencyOptions<FastifyRequest, FastifyConcurrencyFallback>;

/**
 * A Fastify hook (Fastify 4 and 5) that caps requests in flight per key (nginx `limit_conn`). The
 * permit goes back exactly once, when the handler has ended its response or the connection closed
 * (a throw, no answer, a client gone). Beside the plugin's rate limits (at `onRequest`), add it at
 * `preHandler`: it runs after them, so a request they delay or refuse holds no permit meanwhile.
 *
 * @param options - `max` and the rest (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * import { concurrencyLimit } from '@sluice/fastify';
 *
 * app.addHook('preHandler', concurrencyLimit({ key: 'all', max: 500, queue: { maxWaitMs: 2000 } }));
 * app.post('/checkout', { preHandler: concurrencyLimit({ key: '$http_user_id', max: 1 }) }, checkout);
 * ```
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): onRequestHookHandler {
  const limit = createHttpConcurrencyLimiter<FastifyRequest, FastifyConcurrencyFallback>(options);
  return hookOf(gateOf(limit), 'sluiceConcurrencyLimit');
}
