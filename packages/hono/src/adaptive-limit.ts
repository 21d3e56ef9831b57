import type { AdaptiveDecision } from '@sluice/core';
import {
  createHttpAdaptiveLimiter,
  limitFetchHandlerAdaptively,
  type AdaptiveLimitOptions as CoreOptions,
  type FetchFallback,
} from '@sluice/core/adapter';
import type { Context, MiddlewareHandler } from 'hono';
import { middlewareOf } from './gate';

/** A fallback handler for {@link adaptiveLimit}: the `Response` to send in place of the 503. */
export type HonoAdaptiveFallback = FetchFallback<Context, AdaptiveDecision>;

/**
 * Options of {@link adaptiveLimit}: `priority`, `shares`, `status`, `fallback`, `skip`, `dryRun`,
 * `name`, `metrics`, the limiter's `algorithm`, `min`, `max`, `queue`, `eventLoop`, … or a ready
 * `limiter`, with Hono's `c` in callbacks. No key: it never reads the client address.
 */
export type AdaptiveLimitOptions = CoreOptions<Context, HonoAdaptiveFallback>;

/**
 * Hono middleware (Hono 4) that protects the instance from overload: the number of requests in
 * flight follows the latency it measures, shrinks at once when the event loop lags, and
 * `shares` keep each priority its part. Above the limit a request waits briefly or gets a `503`
 * with `Retry-After`. The permit goes back exactly once: on `@hono/node-server` when the
 * handler has ended Node's response or the client left, elsewhere when the handler has returned
 * its `Response` or the request's `signal` aborts.
 *
 * @param options - all optional (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * app.use(adaptiveLimit({
 *   priority: (c) => (c.req.path.startsWith('/checkout') ? 'checkout' : 'browse'),
 *   shares: { checkout: 0.7, browse: 0.3 },
 * }));
 * ```
 */
export function adaptiveLimit(options: AdaptiveLimitOptions = {}): MiddlewareHandler {
  type Options = AdaptiveLimitOptions & { key?: string };
  // A key of plain text tells the gate this limit never reads the client address (any runtime);
  // the user's own `key`, if any, goes on to be refused as the unknown option it is.
  const create = (limits: Options | Options[]) =>
    createHttpAdaptiveLimiter<Context, HonoAdaptiveFallback>({
      ...(limits as Options),
      key: (options as Options).key,
    } as unknown as AdaptiveLimitOptions);
  return middlewareOf<Options>({ ...options, key: 'adaptive' }, create, 'sluiceAdaptiveLimit', true);
}

/**
 * Puts an adaptive limit in front of any Fetch-API handler `(request, ...runtimeArgs) => Response`
 * (Next.js route handlers, `Bun.serve`, `Deno.serve`): `adaptiveLimit`'s options with the
 * `Request` in callbacks. The permit goes back when the handler has returned its `Response` or
 * the request's `signal` aborts.
 *
 * @example
 * ```ts
 * Bun.serve({ fetch: withAdaptiveLimit({ priority: (req) => (new URL(req.url).pathname === '/checkout' ? 'checkout' : 'browse'), shares: { checkout: 0.7, browse: 0.3 } }, handle) });
 * ```
 */
export const withAdaptiveLimit: typeof limitFetchHandlerAdaptively = limitFetchHandlerAdaptively;
