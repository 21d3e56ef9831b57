import type { Decision } from '@sluice/core';
import {
  createHttpLimiter,
  type DecisionFallback,
  type RateLimitOptions as CoreOptions,
} from '@sluice/core/adapter';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { gateOf, middlewareOf, type Gate } from './gate';

/** A fallback handler: replies in place of the rejection, with the decision at hand. */
export type ExpressFallback = DecisionFallback<Request, Response, Decision>;

/**
 * Options of {@link rateLimit} (see core's `RateLimitOptions`), with Express's `req` in callbacks;
 * `countWhen` gets `(req, res)` once the response is done.
 *
 * @example
 * ```ts
 * app.post('/login', rateLimit({ key: (req) => `${req.ip}:${req.body?.username ?? ''}`, rate: '5/15m', countWhen: 'failed' }), login);
 * app.get('/search', rateLimit({ rate: '100/1m', countWhen: (req, res) => res.statusCode !== 304 }), search);
 * ```
 */
export type RateLimitOptions = CoreOptions<Request, ExpressFallback, Response>;

function createGate(options: RateLimitOptions | readonly RateLimitOptions[]): Gate {
  return gateOf(createHttpLimiter<Request, ExpressFallback, Response>(options));
}

/**
 * Express middleware (Express 4 and 5) that rate-limits requests; an array applies several limits
 * in order (see `createHttpLimiter`).
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
  return middlewareOf(createGate(options), 'sluiceRateLimit');
}

/** A controller method Express calls as a handler. */
type ExpressHandlerMethod<This> = (this: This, req: Request, res: Response, next: NextFunction) => unknown;

/**
 * Rate-limits one `(req, res, next)` controller method: a standard (TC39) method decorator. A
 * limited request never reaches it; a store error goes to `next(err)`.
 *
 * @param options - one limit, or several in order
 * @throws `SluiceConfigError` when the class is defined, naming the first invalid option
 * @example
 * ```ts
 * class ShopController {
 *   @RateLimit({ key: '$arg_sku_id', rate: '6r/m' })
 *   async sku(req: Request, res: Response, next: NextFunction) {
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

export type { ExpressHandlerMethod };
export { adaptiveLimit, concurrencyLimit } from './adaptive-limit';
export type {
  AdaptiveLimitOptions,
  ConcurrencyLimitOptions,
  ExpressAdaptiveFallback,
  ExpressConcurrencyFallback,
} from './adaptive-limit';
