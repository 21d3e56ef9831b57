import {
  callFallback,
  decideAndWrite,
  fromContextLike,
  heldOr,
  setHeaderList,
  type AnyHttpOutcome,
  type HttpDecider,
  type Pass,
} from '@sluice/core/adapter';
import type { Context, Middleware, Next } from 'koa';

/** A fallback handler of either limit, as Koa calls it: `(ctx, decision)`. */
type KoaHandler = (ctx: Context, decision: never) => unknown;

/** What a rate limit or a concurrency limit decides for a Koa request. */
export type KoaOutcome = AnyHttpOutcome<KoaHandler>;

/** Runs one limit (or several) for a request: `true` when it may go on — synchronously when core can tell at once. */
export type Gate = (ctx: Context) => Pass;

// Read once: a CommonJS build reads an import through getters at each use.
const [headersOn, gaveUp] = [setHeaderList, heldOr];

/** Does what core decided, the Koa way: `ctx.status` and `ctx.body` for a reply. */
function write(ctx: Context, _: Context, outcome: KoaOutcome): Pass {
  if (outcome.kind === 'gone') {
    ctx.respond = false; // the client left while waiting: nothing to answer
    return false;
  }
  // Node's setHeader, as ctx.set ends in, without Koa 3's per-call arrays (text values only,
  // and nothing is sent before this middleware decides).
  const { res } = ctx;
  headersOn(res, outcome.headers);
  switch (outcome.kind) {
    case 'next':
      return true;
    case 'delay':
      // A client that left while held gets nothing: Koa must not answer it (a 404 to log).
      return gaveUp(outcome.hold(res), () => (ctx.respond = false));
    case 'reply':
      ctx.status = outcome.status;
      // Before the body: Koa infers no type from a body once Content-Type is set.
      res.setHeader('Content-Type', outcome.type);
      ctx.body = outcome.body;
      return false;
    case 'handler':
      // If the handler throws, core answers on the raw response: Koa must not respond after it.
      return callFallback(outcome, [ctx, outcome.decision as never], res, () => (ctx.respond = false)).then(
        () => false,
      );
  }
}

/** The gate of a limit from core: decides, then writes the outcome on the context. */
export function gateOf(decider: HttpDecider<Context, KoaOutcome>): Gate {
  // Read once, here: a CommonJS build reads an import through getters at each use.
  const [decide, httpOf] = [decideAndWrite, fromContextLike];
  return (ctx) => decide(decider, ctx, ctx, httpOf(ctx), ctx.res, write);
}

/**
 * The middleware that runs `gate`, then `next()` when it passes.
 *
 * @param name - the middleware's name, as stack traces show it
 */
export function middlewareOf(gate: Gate, name: string): Middleware {
  const middleware = (ctx: Context, next: Next): Promise<void> => {
    const pass = gate(ctx);
    if (pass === true) return next();
    if (pass === false) return Promise.resolve();
    return pass.then((ok) => (ok ? next() : undefined));
  };
  return Object.defineProperty(middleware, 'name', { value: name });
}
