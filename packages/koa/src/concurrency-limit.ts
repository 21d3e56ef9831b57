import type { ConcurrencyDecision } from '@sluice/core';
import {
  createHttpConcurrencyLimiter,
  type ConcurrencyLimitOptions as CoreOptions,
  type MaybePromise,
} from '@sluice/core/adapter';
import type { Context, Middleware } from 'koa';
import { gateOf, middlewareOf } from './gate';

/** A fallback handler for {@link concurrencyLimit}: replies in place of the refusal (sets `ctx.status` and `ctx.body`). */
export type KoaConcurrencyFallback = (ctx: Context, decision: ConcurrencyDecision) => MaybePromise<unknown>;

/**
 * Options of {@link concurrencyLimit}: `max` (required), `key`, `store`, `queue`, `leaseMs`,
 * `status`, `fallback`, `skip`, `onMissingKey`, `trustProxy`, `dryRun`, `name`, `prefix`, … with
 * Koa's `ctx` in callbacks.
 */
export type ConcurrencyLimitOptions = CoreOptions<Context, KoaConcurrencyFallback>;

/**
 * Koa middleware (Koa 2 and 3) that caps requests in flight per key (nginx `limit_conn`): a
 * permit is taken before `next()` and given back exactly once when the response has been ended
 * (not when the client has read it) or the connection closes first — also when a later
 * middleware throws, never answers, or the client leaves.
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
