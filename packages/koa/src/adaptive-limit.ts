import type { AdaptiveDecision, ConcurrencyDecision } from '@sluice/core';
import {
  createHttpAdaptiveLimiter,
  createHttpConcurrencyLimiter,
  type AdaptiveLimitOptions as CoreAdaptiveOptions,
  type ConcurrencyLimitOptions as CoreConcurrencyOptions,
  type MaybePromise,
} from '@sluice/core/adapter';
import type { Context, Middleware } from 'koa';
import { gateOf, middlewareOf } from './gate';

/** A fallback handler for {@link adaptiveLimit}: replies in place of the 503 (sets `ctx.status` and `ctx.body`). */
export type KoaAdaptiveFallback = (ctx: Context, decision: AdaptiveDecision) => MaybePromise<unknown>;

/** Options of {@link adaptiveLimit} (see core's `AdaptiveLimitOptions`), with Koa's `ctx` in callbacks. */
export type AdaptiveLimitOptions = CoreAdaptiveOptions<Context, KoaAdaptiveFallback>;

/**
 * Koa middleware (Koa 2 and 3) that protects the instance from overload: the requests in flight
 * follow the latency measured, and `shares` keep each priority its part. The permit goes back
 * once the response has been ended or the connection closed.
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

/** A fallback handler for {@link concurrencyLimit}: replies in place of the refusal (sets `ctx.status` and `ctx.body`). */
export type KoaConcurrencyFallback = (ctx: Context, decision: ConcurrencyDecision) => MaybePromise<unknown>;

/** Options of {@link concurrencyLimit} (see core's `ConcurrencyLimitOptions`), with Koa's `ctx` in callbacks. */
export type ConcurrencyLimitOptions = CoreConcurrencyOptions<Context, KoaConcurrencyFallback>;

/**
 * Koa middleware (Koa 2 and 3) that caps requests in flight per key (nginx `limit_conn`). The
 * permit goes back exactly once, when the response has been ended or the connection closed (a
 * throw, no answer, a client gone).
 *
 * @param options - `max` and the rest (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * import { concurrencyLimit } from '@sluice/koa';
 *
 * app.use(concurrencyLimit({ key: 'all', max: 500, queue: { maxWaitMs: 2000 } }));
 * ```
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): Middleware {
  const limit = createHttpConcurrencyLimiter<Context, KoaConcurrencyFallback>(options);
  return middlewareOf(gateOf(limit), 'sluiceConcurrencyLimit');
}
