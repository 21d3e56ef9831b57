import { type AdaptiveDecision, type ConcurrencyDecision, type Decision } from '@sluice/core';
import {
  createHttpAdaptiveLimiter,
  createHttpConcurrencyLimiter,
  createHttpLimiter,
  limitFetchHandler,
  limitFetchHandlerAdaptively,
  type AdaptiveLimitOptions as CoreAdaptiveOptions,
  type ConcurrencyLimitOptions as CoreConcurrencyOptions,
  type FetchFallback,
  type RateLimitOptions as CoreOptions,
} from '@sluice/core/adapter';
import type { Context, MiddlewareHandler } from 'hono';
import { middlewareOf } from './gate';

/** A fallback handler: the `Response` to send in place of the refusal (`c.json(…)`), with the decision at hand. */
export type HonoFallback = FetchFallback<Context, Decision>;

/** A fallback handler for {@link concurrencyLimit}. */
export type HonoConcurrencyFallback = FetchFallback<Context, ConcurrencyDecision>;

/** A fallback handler for {@link adaptiveLimit}: the `Response` to send in place of the 503. */
export type HonoAdaptiveFallback = FetchFallback<Context, AdaptiveDecision>;

/** The client address where the runtime gives Hono none: `(c) => getConnInfo(c).remote.address` (`hono/bun`, `hono/deno`, …). */
export type ClientAddress = (c: Context) => string | undefined | null;

/** `clientAddress`: where the client address comes from when the runtime gives Hono none. */
export interface ClientAddressOption {
  /**
   * The client address for keys that read it (`$binary_remote_addr`, the default, `$remote_addr`).
   * Off `@hono/node-server` there is none: a limit keyed by it then fails each request with a
   * `SluiceConfigError`. `undefined` or `null`: the request is refused, as a client that is gone.
   * With several limits, give it with the first.
   * @defaultValue the connection's peer on `@hono/node-server` (with `trustProxy`, `X-Forwarded-For`); none elsewhere
   */
  clientAddress?: ClientAddress;
}

/**
 * Options of {@link rateLimit} (see core's `RateLimitOptions`), with Hono's `c` in callbacks, and
 * `clientAddress`; `countWhen` gets `(c, c)` once the handler has run (`c.res`).
 *
 * @example
 * ```ts
 * app.post('/login', rateLimit({ key: '$remote_addr', rate: '5/15m', countWhen: 'failed' }), login);
 * app.post('/search', rateLimit({ rate: '100/1m', countWhen: (c) => c.res.status !== 304 }), search);
 * ```
 */
export type RateLimitOptions = CoreOptions<Context, HonoFallback, Context> & ClientAddressOption;

/** Options of {@link concurrencyLimit} (see core's `ConcurrencyLimitOptions`), with Hono's `c` in callbacks, and `clientAddress`. */
export type ConcurrencyLimitOptions = CoreConcurrencyOptions<Context, HonoConcurrencyFallback> &
  ClientAddressOption;

/** Options of {@link adaptiveLimit} (see core's `AdaptiveLimitOptions`), with Hono's `c` in callbacks; no key. */
export type AdaptiveLimitOptions = CoreAdaptiveOptions<Context, HonoAdaptiveFallback>;

/**
 * Hono middleware (Hono 4) that rate-limits requests; an array applies several limits in order.
 * `$route` is the pattern of the route that answers, wherever the limit is mounted.
 *
 * @param options - one limit, or several in order
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * const app = new Hono();
 * app.use(rateLimit({ rate: '10r/s', burst: 20 }));
 * app.get('/buy', rateLimit({ key: '$arg_sku_id', rate: '6r/m', fallback: { body: { cached: true } } }), buy);
 * serve(app); // @hono/node-server
 * ```
 */
export function rateLimit(options: RateLimitOptions | readonly RateLimitOptions[]): MiddlewareHandler {
  return middlewareOf(options, createHttpLimiter<Context, HonoFallback, Context>, 'sluiceRateLimit');
}

/**
 * Hono middleware (Hono 4) that caps requests in flight per key (nginx `limit_conn`). The permit
 * goes back once: on `@hono/node-server` when Node's response closes, elsewhere when the handler
 * has returned its `Response` or the request's `signal` aborts.
 *
 * @param options - `max` and the rest (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * app.post('/checkout', concurrencyLimit({ key: '$http_user_id', max: 1 }), checkout);
 * ```
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): MiddlewareHandler {
  const create = (limits: unknown) => createHttpConcurrencyLimiter(limits as ConcurrencyLimitOptions);
  return middlewareOf(options, create, 'sluiceConcurrencyLimit', { where: 'Hono options', permits: true });
}

/**
 * Hono middleware (Hono 4) that protects the instance from overload: the requests in flight follow
 * the latency measured, and `shares` keep each priority its part. The permit goes back as
 * {@link concurrencyLimit}'s does.
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
  // No key: the limit reads no client address, on any runtime (a `key` is refused as unknown).
  const create = (limits: unknown) => createHttpAdaptiveLimiter(limits as AdaptiveLimitOptions);
  return middlewareOf(options, create, 'sluiceAdaptiveLimit', { permits: true, keyless: true });
}

/**
 * Rate-limits any Fetch-API handler `(request, ...runtimeArgs) => Response` (Next.js route
 * handlers, `Bun.serve`, `Deno.serve`): the same options with the `Request` in callbacks, and
 * `clientAddress(request, ...runtimeArgs)` when a key reads the client address.
 *
 * @example
 * ```ts
 * export const GET = withRateLimit({ key: '$http_user_id', rate: '10r/s' }, async () => Response.json({ ok: true }));
 * Bun.serve({ fetch: withRateLimit({ rate: '10r/s', clientAddress: (req, server) => server.requestIP(req)?.address }, handle) });
 * ```
 */
export const withRateLimit: typeof limitFetchHandler = limitFetchHandler;

/**
 * Puts an adaptive limit in front of any Fetch-API handler: {@link adaptiveLimit}'s options with
 * the `Request` in callbacks. The permit goes back when the handler has returned its `Response`
 * or the request's `signal` aborts.
 *
 * @example
 * ```ts
 * Bun.serve({ fetch: withAdaptiveLimit({ priority: (req) => (new URL(req.url).pathname === '/checkout' ? 'checkout' : 'browse'), shares: { checkout: 0.7, browse: 0.3 } }, handle) });
 * ```
 */
export const withAdaptiveLimit: typeof limitFetchHandlerAdaptively = limitFetchHandlerAdaptively;

export type { ConcurrencyDecision, Decision } from '@sluice/core';
export type {
  CallbackErrorEvent,
  CountWhen,
  FetchAdaptiveLimitOptions,
  FetchHandler,
  FetchRateLimitOptions,
  HeaderMode,
  LimitEvent,
  MissingKeyMode,
  RequestFallback,
  StaticFallback,
  TrustProxy,
} from '@sluice/core/adapter';
