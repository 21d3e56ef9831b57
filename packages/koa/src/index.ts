import type { Decision } from '@sluice/core';
import {
  createHttpLimiter,
  type MaybePromise,
  type RateLimitOptions as CoreOptions,
} from '@sluice/core/adapter';
import type { Context, Middleware, Next } from 'koa';
import { gateOf, middlewareOf, type Gate } from './gate';

/** A fallback handler: replies in place of the rejection (sets `ctx.status` and `ctx.body`), with the decision at hand. */
export type KoaFallback = (ctx: Context, decision: Decision) => MaybePromise<unknown>;

/**
 * Options of {@link rateLimit} (see core's `RateLimitOptions`), with Koa's `ctx` in callbacks;
 * `countWhen` gets `(ctx, ctx)` once the response is done.
 *
 * @example
 * ```ts
 * router.post('/login', rateLimit({ key: '$remote_addr', rate: '5/15m', countWhen: 'failed' }), login);
 * app.use(rateLimit({ rate: '100/1m', countWhen: (ctx) => ctx.status !== 304 }));
 * ```
 */
export type RateLimitOptions = CoreOptions<Context, KoaFallback, Context>;

function createGate(options: RateLimitOptions | readonly RateLimitOptions[]): Gate {
  return gateOf(createHttpLimiter<Context, KoaFallback, Context>(options));
}

/**
 * Koa middleware (Koa 2 and 3) that rate-limits requests; an array applies several limits in
 * order (see `createHttpLimiter`).
 *
 * @param options - one limit, or several in order
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * import Koa from 'koa';
 * import { rateLimit } from '@sluice/koa';
 *
 * const app = new Koa();
 * app.use(rateLimit({ rate: '10r/s', burst: 20 }));
 * app.use((ctx) => { ctx.body = 'hello'; });
 * ```
 */
export function rateLimit(options: RateLimitOptions | readonly RateLimitOptions[]): Middleware {
  return middlewareOf(createGate(options), 'sluiceRateLimit');
}

/** A controller method Koa calls as middleware. */
type KoaHandlerMethod<This> = (this: This, ctx: Context, next: Next) => unknown;

/**
 * Rate-limits one `(ctx, next)` controller method: a standard (TC39) method decorator. A limited
 * request never reaches it.
 *
 * @param options - one limit, or several in order
 * @throws `SluiceConfigError` when the class is defined, naming the first invalid option
 * @example
 * ```ts
 * class ShopController {
 *   @RateLimit({ key: '$http_user_id', rate: '2r/s' })
 *   async demo(ctx: Context, next: Next) {
 *     ctx.body = { ok: true };
 *   }
 * }
 * const shop = new ShopController();
 * router.get('/demo', (ctx, next) => shop.demo(ctx, next));
 * ```
 */
export function RateLimit(options: RateLimitOptions | readonly RateLimitOptions[]) {
  const gate = createGate(options);
  return function decorate<This, Method extends KoaHandlerMethod<This>>(
    method: Method,
    _context: ClassMethodDecoratorContext<This, Method>,
  ): Method {
    async function sluiceRateLimited(this: This, ctx: Context, next: Next): Promise<unknown> {
      return (await gate(ctx)) ? method.call(this, ctx, next) : undefined;
    }
    return sluiceRateLimited as Method;
  };
}

export type { ConcurrencyDecision, Decision } from '@sluice/core';
export type {
  CallbackErrorEvent,
  CallbackSource,
  CountWhen,
  ConcurrencyLimitEvent,
  HeaderMode,
  JsonValue,
  LimitEvent,
  MissingKeyMode,
  StaticFallback,
  TrustProxy,
} from '@sluice/core/adapter';

export type { KoaHandlerMethod };
export { adaptiveLimit, concurrencyLimit } from './adaptive-limit';
export type {
  AdaptiveLimitOptions,
  ConcurrencyLimitOptions,
  KoaAdaptiveFallback,
  KoaConcurrencyFallback,
} from './adaptive-limit';
