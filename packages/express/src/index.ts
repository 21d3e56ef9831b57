import type { Decision } from '@sluice/core';
import {
  createHttpLimiter,
  type MaybePromise,
  type RateLimitOptions as CoreOptions,
} from '@sluice/core/adapter';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { gateOf, middlewareOf, type Gate } from './gate';

/** A fallback handler: replies in place of the rejection, with the decision at hand. */
export type ExpressFallback = (req: Request, res: Response, decision: Decision) => MaybePromise<unknown>;

/**
 * Options of {@link rateLimit}: the shared sluice options (`key`, `rate` or `rules`, `burst`,
 * `status`, `fallback`, `headers`, `dryRun`, `trustProxy`, …) with Express's `req` in callbacks,
 * `overrides: (key, req) => rate | undefined` included.
 */
export type RateLimitOptions = CoreOptions<Request, ExpressFallback>;

function createGate(options: RateLimitOptions | readonly RateLimitOptions[]): Gate {
  return gateOf(createHttpLimiter<Request, ExpressFallback>(options));
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
  return middlewareOf(createGate(options), 'sluiceRateLimit');
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
  ConcurrencyLimitEvent,
  HeaderMode,
  JsonValue,
  LimitEvent,
  MissingKeyMode,
  StaticFallback,
  TrustProxy,
} from '@sluice/core/adapter';

export { concurrencyLimit } from './concurrency-limit';
export type { ConcurrencyLimitOptions, ExpressConcurrencyFallback } from './concurrency-limit';
export type { ExpressHandlerMethod };
export { adaptiveLimit } from './adaptive-limit';
export type { AdaptiveLimitOptions, ExpressAdaptiveFallback } from './adaptive-limit';
