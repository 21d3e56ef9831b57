import { SetMetadata } from '@nestjs/common';
import type {
  AdaptiveLimitOptions,
  ConcurrencyLimitOptions,
  NestHttpRequest,
  RateLimitOptions,
} from './options';

/** What `@RateLimit` and `@SkipRateLimit` store under one key, so the nearest (a method's over its controller's) wins. */
export type RateLimitMetadata =
  { readonly limits: RateLimitOptions<never, never> | ReadonlyArray<RateLimitOptions<never, never>> } | false;

/** The metadata key of {@link RateLimit} and {@link SkipRateLimit}, read with Nest's `Reflector`. */
export const RATE_LIMIT_METADATA = 'sluice:rate-limit';

/**
 * Rate-limits a route handler, or every route of a controller (one bucket for them). The limits
 * replace the module's there (as nginx's `limit_req` in a `location`), merged over the module's
 * defaults; a method's decorator wins over its controller's. Validated when the application starts.
 *
 * @param options - one limit, or several applied in order
 * @example
 * ```ts
 * @Controller('shop')
 * export class ShopController {
 *   @Get('sku')
 *   @RateLimit({ key: '$arg_sku_id', rate: '6r/m', fallback: { body: { cached: true } } })
 *   sku() {}
 * }
 * ```
 */
export function RateLimit<TRequest = NestHttpRequest, TResponse = unknown>(
  options: RateLimitOptions<TRequest, TResponse> | ReadonlyArray<RateLimitOptions<TRequest, TResponse>>,
): MethodDecorator & ClassDecorator {
  // A fresh object per use: the guard keeps one set of limits (buckets) per decorator.
  return SetMetadata(RATE_LIMIT_METADATA, { limits: options } as RateLimitMetadata);
}

/**
 * Exempts a route handler, or a controller's routes, from the module's limits and a controller's
 * `@RateLimit` (a method's own `@RateLimit` still applies under a skipped controller).
 *
 * @example
 * ```ts
 * @Get('health')
 * @SkipRateLimit()
 * health() {}
 * ```
 */
export function SkipRateLimit(): MethodDecorator & ClassDecorator {
  return SetMetadata(RATE_LIMIT_METADATA, false satisfies RateLimitMetadata);
}

/** What `@ConcurrencyLimit` stores: a fresh object per use, each with its own permits. */
export interface ConcurrencyLimitMetadata {
  readonly limit: ConcurrencyLimitOptions<never, never>;
}

/** The metadata key of {@link ConcurrencyLimit}, read with Nest's `Reflector`. */
export const CONCURRENCY_LIMIT_METADATA = 'sluice:concurrency-limit';

/**
 * Caps the requests in flight per key on a route handler, or on a controller's routes together
 * (nginx `limit_conn`), after the route's rate limits (needs `SluiceModule`); the permit goes back
 * exactly once, when the response has ended or the connection closed. A method's decorator
 * replaces its controller's; each has its own permits (`sluice:<Controller>[.<method>]`, unless `prefix`).
 *
 * @param options - `max` and the rest, as every adapter's `concurrencyLimit`
 * @example
 * ```ts
 * @Post('checkout')
 * @ConcurrencyLimit({ key: '$http_user_id', max: 1 }) // one checkout per user at a time
 * checkout() {}
 *
 * @Controller('orders')
 * @ConcurrencyLimit({ key: 'all', max: 500, queue: { maxWaitMs: 2000 } }) // protect the backend
 * export class OrdersController {}
 * ```
 */
export function ConcurrencyLimit<TRequest = NestHttpRequest, TResponse = unknown>(
  options: ConcurrencyLimitOptions<TRequest, TResponse>,
): MethodDecorator & ClassDecorator {
  return SetMetadata(CONCURRENCY_LIMIT_METADATA, { limit: options } as ConcurrencyLimitMetadata);
}

/** What `@AdaptiveLimit` stores: a fresh object per use, each with its own limiter. */
export interface AdaptiveLimitMetadata {
  /** The decorator's options. */
  readonly limit: AdaptiveLimitOptions<never, never>;
}

/** The metadata key of {@link AdaptiveLimit}, read with Nest's `Reflector`. */
export const ADAPTIVE_LIMIT_METADATA = 'sluice:adaptive-limit';

/**
 * Protects a route handler, or a controller's routes together, from overload (every adapter's
 * `adaptiveLimit`), after the route's rate limits (needs `SluiceModule`); replaces the module's
 * `adaptive` there, and a method's decorator its controller's.
 *
 * @param options - all optional, as every adapter's `adaptiveLimit`
 * @example
 * ```ts
 * @Controller('shop')
 * @AdaptiveLimit({ priority: (req) => (req.url.startsWith('/shop/checkout') ? 'checkout' : 'browse'), shares: { checkout: 0.7, browse: 0.3 } })
 * export class ShopController {}
 * ```
 */
export function AdaptiveLimit<TRequest = NestHttpRequest, TResponse = unknown>(
  options: AdaptiveLimitOptions<TRequest, TResponse> = {},
): MethodDecorator & ClassDecorator {
  return SetMetadata(ADAPTIVE_LIMIT_METADATA, { limit: options } as AdaptiveLimitMetadata);
}
