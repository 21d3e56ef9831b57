import {
  callFallback,
  createHttpConcurrencyLimiter,
  type ConcurrencyDecision,
  type ConcurrencyLimitOptions as CoreOptions,
  type ConcurrencyOutcome,
  type MaybePromise,
} from '@sluice/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { httpRequestOf } from './http-request';

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

/** Does what core decided: `true` when the request may go on. */
function apply(
  req: Request,
  res: Response,
  outcome: ConcurrencyOutcome<ExpressConcurrencyFallback>,
): boolean | Promise<boolean> {
  if (outcome.kind === 'gone') return false;
  for (const [name, value] of outcome.headers) res.setHeader(name, value);
  switch (outcome.kind) {
    case 'next':
      return true;
    case 'reply':
      res.statusCode = outcome.status;
      res.setHeader('Content-Type', outcome.type);
      res.end(outcome.body);
      return false;
    case 'handler':
      return callFallback(outcome, [req, res, outcome.decision], res).then(() => false);
  }
}

/**
 * Express middleware (Express 4 and 5) that caps requests in flight per key (nginx
 * `limit_conn`): a permit is taken before the next handler and given back exactly once when the
 * response finishes or its connection closes — also when the handler throws, never answers, or
 * the client leaves. Put it after `rateLimit` on a route to use both.
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
  return function sluiceConcurrencyLimit(req: Request, res: Response, next: NextFunction): void {
    const http = httpRequestOf(req);
    let pass: boolean | Promise<boolean>;
    try {
      const outcome = limit.decideSync(req, http, res);
      pass =
        outcome !== undefined
          ? apply(req, res, outcome)
          : limit.decide(req, http, res).then((o) => apply(req, res, o));
    } catch (error) {
      return next(error);
    }
    if (pass === true) next();
    else if (pass !== false) pass.then((ok) => ok && next(), next);
  };
}
