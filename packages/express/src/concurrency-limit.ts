import type { ConcurrencyDecision } from '@sluice/core';
import {
  createHttpConcurrencyLimiter,
  type ConcurrencyLimitOptions as CoreOptions,
  type MaybePromise,
} from '@sluice/core/adapter';
import type { Request, RequestHandler, Response } from 'express';
import { gateOf, middlewareOf } from './gate';

/** A fallback handler for {@link concurrencyLimit}: replies in place of the refusal, with the decision at hand. */
export type ExpressConcurrencyFallback = (
  req: Request,
  res: Response,
  decision: ConcurrencyDecision,
) => MaybePromise<unknown>;

/**
 * Options of {@link concurrencyLimit}: `max` (required), `key`, `store`, `queue`, `leaseMs`,
 * `status`, `fallback`, `skip`, `onMissingKey`, `trustProxy`, `dryRun`, `name`, `prefix`, … with
 * Express's `req` in callbacks.
 */
export type ConcurrencyLimitOptions = CoreOptions<Request, ExpressConcurrencyFallback>;

/**
 * Express middleware (Express 4 and 5) that caps requests in flight per key (nginx
 * `limit_conn`): a permit is taken before the next handler and given back exactly once when the
 * handler has ended its response (not when the client has read it) or the connection closes
 * first — also when the handler throws, never answers, or the client leaves. Put it after
 * `rateLimit` on a route to use both.
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
