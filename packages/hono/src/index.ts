import { type ConcurrencyDecision, type Decision } from '@sluice/core';
import {
  createHttpConcurrencyLimiter,
  createHttpLimiter,
  limitFetchHandler,
  namingAdapterOptions,
  type ConcurrencyLimitOptions as CoreConcurrencyOptions,
  type FetchFallback,
  type RateLimitOptions as CoreOptions,
} from '@sluice/core/adapter';
import type { Context, MiddlewareHandler } from 'hono';
import { middlewareOf, type ClientAddress } from './gate';

/** A fallback handler: the `Response` to send in place of the refusal (`c.json(…)`), with the decision at hand. */
export type HonoFallback = FetchFallback<Context, Decision>;

/** A fallback handler for {@link concurrencyLimit}. */
export type HonoConcurrencyFallback = FetchFallback<Context, ConcurrencyDecision>;

/** `clientAddress`: where the client address comes from when the runtime gives Hono none. */
export interface ClientAddressOption {
  /**
   * The client address for keys that read it (`$binary_remote_addr`, the default, `$remote_addr`).
   * Other runtimes than `@hono/node-server` give none: a limit keyed by it then fails each request
   * with a `SluiceConfigError`, never keys every client alike. `undefined` or `null`: the request
   * is refused, as a client that is gone. With several limits, give it with the first.
   * @defaultValue the connection's peer on `@hono/node-server` (with `trustProxy`, `X-Forwarded-For`); none elsewhere
   */
  clientAddress?: ClientAddress;
}

/** Options of {@link rateLimit}: the shared sluice options with Hono's `c` in callbacks (`overrides: (key, c) => …` too), and `clientAddress`. */
export type RateLimitOptions = CoreOptions<Context, HonoFallback> & ClientAddressOption;

/** Options of {@link concurrencyLimit}: `max` (required), `key`, `store`, `queue`, `status`, `fallback`, … with Hono's `c` in callbacks, and `clientAddress`. */
export type ConcurrencyLimitOptions = CoreConcurrencyOptions<Context, HonoConcurrencyFallback> &
  ClientAddressOption;

const own = <T>(create: () => T): T => namingAdapterOptions(['clientAddress'], 'Hono options', create);

/**
 * Hono middleware (Hono 4) that rate-limits requests. Options are validated once, here; an array
 * applies several limits in order. `$route` is the pattern of the route that answers, wherever
 * the limit is mounted.
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
  const create = (limits: CoreOptions<Context, HonoFallback> | Array<CoreOptions<Context, HonoFallback>>) =>
    own(() => createHttpLimiter<Context, HonoFallback>(limits));
  return middlewareOf(options, create, 'sluiceRateLimit');
}

/**
 * Hono middleware (Hono 4) that caps requests in flight per key (nginx `limit_conn`). The permit
 * goes back exactly once: on `@hono/node-server` when Node's response closes (sent, or the client
 * left), elsewhere when the handler has returned its `Response` or the request's `signal` aborts.
 *
 * @param options - `max` and the rest (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * app.post('/checkout', concurrencyLimit({ key: '$http_user_id', max: 1 }), checkout);
 * ```
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): MiddlewareHandler {
  type Options = CoreConcurrencyOptions<Context, HonoConcurrencyFallback>;
  const create = (limits: Options | Options[]) => own(() => createHttpConcurrencyLimiter(limits as Options));
  return middlewareOf(options, create, 'sluiceConcurrencyLimit', true);
}

/**
 * Rate-limits any Fetch-API handler `(request, ...runtimeArgs) => Response` (Next.js route
 * handlers, `Bun.serve`, `Deno.serve`): the same options, keys, headers, refusals and delays,
 * with the `Request` in callbacks, `$arg_` read from `searchParams`, and `clientAddress(request,
 * ...runtimeArgs)` required when a key reads the client address.
 *
 * @example
 * ```ts
 * export const GET = withRateLimit({ key: '$http_user_id', rate: '10r/s' }, async () => Response.json({ ok: true }));
 * Bun.serve({ fetch: withRateLimit({ rate: '10r/s', clientAddress: (req, server) => server.requestIP(req)?.address }, handle) });
 * ```
 */
export const withRateLimit: typeof limitFetchHandler = limitFetchHandler;

export type { ClientAddress } from './gate';
export type { ConcurrencyDecision, Decision } from '@sluice/core';
export type {
  CallbackErrorEvent,
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
export { adaptiveLimit, withAdaptiveLimit } from './adaptive-limit';
export type { AdaptiveLimitOptions, HonoAdaptiveFallback } from './adaptive-limit';
