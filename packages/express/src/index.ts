import {
  callFallback,
  createHttpLimiter,
  type Decision,
  type HttpOutcome,
  type MaybePromise,
  type RateLimitOptions as CoreOptions,
} from '@sluice/core';
import { httpRequestOf } from './http-request';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** A fallback handler: replies in place of the rejection, with the decision at hand. */
export type ExpressFallback = (req: Request, res: Response, decision: Decision) => MaybePromise<unknown>;

/**
 * Options of {@link rateLimit}: the shared sluice options (`key`, `rate` or `rules`, `burst`,
 * `status`, `fallback`, `headers`, `dryRun`, `trustProxy`, …) with Express's `req` in callbacks,
 * `overrides: (key, req) => rate | undefined` included.
 */
export type RateLimitOptions = CoreOptions<Request, ExpressFallback>;

/** Runs the limits for one request: `true` when it may go on — synchronously when core can tell at once. */
type Gate = (req: Request, res: Response) => boolean | Promise<boolean>;

function createGate(options: RateLimitOptions | readonly RateLimitOptions[]): Gate {
  const limits = createHttpLimiter<Request, ExpressFallback>(options);
  const apply = (
    req: Request,
    res: Response,
    outcome: HttpOutcome<ExpressFallback>,
  ): boolean | Promise<boolean> => {
    const { headers } = outcome;
    for (let i = 0; i < headers.length; i++) {
      const [name, value] = headers[i] as readonly [string, string];
      res.setHeader(name, value);
    }
    switch (outcome.kind) {
      case 'next':
        return true;
      case 'delay':
        return outcome.hold(res);
      case 'reply':
        // Node's own API: identical on Express 4 and 5.
        res.statusCode = outcome.status;
        res.setHeader('Content-Type', outcome.type);
        res.end(outcome.body);
        return false;
      case 'handler':
        // A handler that throws still leaves the client a reply (core writes it on `res`).
        return callFallback(outcome, [req, res, outcome.decision], res).then(() => false);
    }
  };
  return (req, res) => {
    const http = httpRequestOf(req);
    const outcome = limits.decideSync(req, http);
    return outcome !== undefined
      ? apply(req, res, outcome)
      : limits.decide(req, http).then((o) => apply(req, res, o));
  };
}

/**
 * Express middleware (Express 4 and 5) that rate-limits requests. Options are validated once,
 * here; an array applies several limits in order (see `createHttpLimiter` for the guarantee).
 *
 * @param options - one limit, or several in order
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * import express from 'express';
 * import { rateLimit } from '@sluice/express';
 *
 * const app = express();
 * app.use(rateLimit({ rate: '10r/s', burst: 20 }));
 * app.get('/buy', rateLimit({ key: '$arg_sku_id', rate: '6r/m', fallback: { body: { cached: true } } }), buy);
 * ```
 */
export function rateLimit(options: RateLimitOptions | readonly RateLimitOptions[]): RequestHandler {
  const gate = createGate(options);
  return function sluiceRateLimit(req: Request, res: Response, next: NextFunction): void {
    let pass: boolean | Promise<boolean>;
    try {
      pass = gate(req, res);
    } catch (error) {
      return next(error);
    }
    if (pass === true) next();
    else if (pass !== false) pass.then((ok) => ok && next(), next);
  };
}

/** A controller method Express calls as a handler. */
type ExpressHandlerMethod<This> = (this: This, req: Request, res: Response, next: NextFunction) => unknown;

/**
 * Rate-limits one controller method: a standard (TC39, TypeScript 5) method decorator for a
 * `(req, res, next)` handler. The limits are created once per decorated method. A limited request
 * never reaches the method; a store error goes to `next(err)` when Express passed `next`.
 *
 * @param options - one limit, or several in order
 * @throws `SluiceConfigError` when the class is defined, naming the first invalid option
 * @example
 * ```ts
 * class ShopController {
 *   @RateLimit({ key: '$arg_sku_id', rate: '6r/m' })
 *   async sku(req: Request, res: Response) {
 *     res.json({ sku: req.query.sku_id });
 *   }
 * }
 * const shop = new ShopController();
 * app.get('/sku', (req, res, next) => shop.sku(req, res, next));
 * ```
 */
export function RateLimit(options: RateLimitOptions | readonly RateLimitOptions[]) {
  const gate = createGate(options);
  return function decorate<This, Method extends ExpressHandlerMethod<This>>(
    method: Method,
    _context: ClassMethodDecoratorContext<This, Method>,
  ): Method {
    async function sluiceRateLimited(
      this: This,
      req: Request,
      res: Response,
      next: NextFunction,
    ): Promise<unknown> {
      try {
        if (!(await gate(req, res))) return undefined;
      } catch (error) {
        // Express 4 ignores rejected promises: hand the error over explicitly.
        if (typeof next === 'function') return next(error);
        throw error;
      }
      return method.call(this, req, res, next);
    }
    return sluiceRateLimited as Method;
  };
}

export type {
  CallbackErrorEvent,
  ConcurrencyDecision,
  Decision,
  HeaderMode,
  LimitEvent,
  MissingKeyMode,
  StaticFallback,
  TrustProxy,
} from '@sluice/core';

export { concurrencyLimit } from './concurrency-limit';
export type { ConcurrencyLimitOptions, ExpressConcurrencyFallback } from './concurrency-limit';
