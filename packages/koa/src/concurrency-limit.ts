import {
  callFallback,
  createHttpConcurrencyLimiter,
  type ConcurrencyDecision,
  type ConcurrencyLimitOptions as CoreOptions,
  type ConcurrencyOutcome,
  type MaybePromise,
} from '@sluice/core';
import type { Context, Middleware, Next } from 'koa';
import { httpRequestOf } from './http-request';

/** A fallback handler for {@link concurrencyLimit}: replies in place of the refusal (sets `ctx.status` and `ctx.body`). */
export type KoaConcurrencyFallback = (ctx: Context, decision: ConcurrencyDecision) => MaybePromise<unknown>;

/**
 * Options of {@link concurrencyLimit}: `max` (required), `key`, `store`, `queue`, `leaseMs`,
 * `status`, `fallback`, `skip`, `onMissingKey`, `trustProxy`, `dryRun`, `name`, `prefix`, … with
 * Koa's `ctx` in callbacks.
 */
export type ConcurrencyLimitOptions = CoreOptions<Context, KoaConcurrencyFallback>;

/** Does what core decided: `true` when the request may go on. */
function apply(
  ctx: Context,
  outcome: ConcurrencyOutcome<KoaConcurrencyFallback>,
): boolean | Promise<boolean> {
  if (outcome.kind === 'gone') {
    ctx.respond = false; // the client left while waiting: nothing to answer
    return false;
  }
  const { res } = ctx;
  for (const [name, value] of outcome.headers) res.setHeader(name, value);
  switch (outcome.kind) {
    case 'next':
      return true;
    case 'reply':
      ctx.status = outcome.status;
      res.setHeader('Content-Type', outcome.type);
      ctx.body = outcome.body;
      return false;
    case 'handler':
      return callFallback(outcome, [ctx, outcome.decision], res, () => (ctx.respond = false)).then(
        () => false,
      );
  }
}

/**
 * Koa middleware (Koa 2 and 3) that caps requests in flight per key (nginx `limit_conn`): a
 * permit is taken before `next()` and given back exactly once when the response finishes or its
 * connection closes — also when a later middleware throws, never answers, or the client leaves.
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
  return function sluiceConcurrencyLimit(ctx: Context, next: Next): Promise<void> {
    const { res } = ctx;
    const http = httpRequestOf(ctx);
    const outcome = limit.decideSync(ctx, http, res);
    const pass =
      outcome !== undefined ? apply(ctx, outcome) : limit.decide(ctx, http, res).then((o) => apply(ctx, o));
    if (pass === true) return next();
    if (pass === false) return Promise.resolve();
    return pass.then((ok) => (ok ? next() : undefined));
  };
}
