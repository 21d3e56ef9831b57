import {
  decideAndWrite,
  fromContextLike,
  writeContextOutcome,
  type AnyHttpOutcome,
  type HttpDecider,
  type Pass,
} from '@sluice/core/adapter';
import type { Context, Middleware, Next } from 'koa';

/** What a rate limit or a concurrency limit decides for a Koa request. */
export type KoaOutcome = AnyHttpOutcome<(ctx: Context, decision: never) => unknown>;

/** Runs one limit (or several) for a request: `true` when it may go on — synchronously when core can tell at once. */
export type Gate = (ctx: Context) => Pass;

/** The gate of a limit from core: decides, then writes the outcome on the context. */
export function gateOf(decider: HttpDecider<Context, KoaOutcome>): Gate {
  // Read once, here: a CommonJS build reads an import through getters at each use.
  const [decide, write, httpOf] = [decideAndWrite, writeContextOutcome, fromContextLike];
  return (ctx) => decide(decider, ctx, ctx, httpOf(ctx), ctx.res, write);
}

/** The middleware `name` (as stack traces show it) that runs `gate`, then `next()` when it passes. */
export function middlewareOf(gate: Gate, name: string): Middleware {
  const middleware = (ctx: Context, next: Next): Promise<void> => {
    const pass = gate(ctx);
    if (pass === true) return next();
    if (pass === false) return Promise.resolve();
    return pass.then((ok) => (ok ? next() : undefined));
  };
  return Object.defineProperty(middleware, 'name', { value: name });
}
