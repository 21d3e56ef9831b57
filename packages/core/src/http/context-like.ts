import type { PeerSocket } from '../keys/client-address';
import type { HttpRequest } from '../keys/http-request';
import { callFallback } from './call-fallback';
import { NeutralRequest } from './neutral-request';
import { heldOr, setHeaderList, type AnyHttpOutcome, type NodeResponse, type Pass } from './write-outcome';

/**
 * Koa's context as its middleware hands it over (`@sluice/koa`): Node's request is `req`, the
 * URL as received `originalUrl` (koa-mount and routers rewrite `url`), and `@koa/router` names
 * the route it matched `_matchedRoute`.
 */
export interface ContextLike {
  readonly req: {
    readonly socket: PeerSocket | null | undefined;
    readonly headers: HttpRequest['headers'];
    readonly rawHeaders?: readonly string[];
  };
  readonly originalUrl: string;
  readonly query?: unknown;
  readonly _matchedRoute?: unknown;
}

/**
 * A {@link ContextLike} in core's neutral shape, for `@sluice/koa`'s limits: the peer's address
 * (`undefined` once the client has reset), the full URL, the headers; the parsed query
 * (`ctx.query`) and the route `@koa/router` matched read only when a key asks.
 *
 * @param ctx - Koa's context
 * @example
 * ```ts
 * const http = fromContextLike(ctx); // http.route() → '/items/:id' under @koa/router
 * ```
 */
export function fromContextLike(ctx: ContextLike): HttpRequest {
  return new FromContextLike(ctx);
}

/** Koa's context: the query it parsed, the route `@koa/router` matched. */
class FromContextLike extends NeutralRequest<ContextLike> {
  constructor(ctx: ContextLike) {
    super(ctx, ctx.req.socket, ctx.originalUrl, ctx.req.headers, ctx.req.rawHeaders);
  }

  query(): unknown {
    return this.source.query;
  }

  route(): string | undefined {
    const route = this.source._matchedRoute;
    return route === undefined ? undefined : String(route);
  }
}

/** Koa's context as {@link writeContextOutcome} answers on it: its status, body and `respond` flag. */
export interface WritableContextLike {
  /** Node's response: headers, a hold, and the raw reply when a fallback handler throws. */
  readonly res: NodeResponse;
  /** The status of a reply. */
  status: number;
  /** The body of a reply. */
  body: unknown;
  /** Set to `false` where Koa must not answer (the client is gone, or sluice answered on `res`). */
  respond?: boolean | undefined;
}

/**
 * Does what core decided, the Koa way (`@sluice/koa`): sets the headers on Node's response, then
 * passes the request on, holds it (`delay`), sets `ctx.status` and `ctx.body` for a reply, or
 * calls the fallback handler with `(ctx, decision)`. Where the client is gone or sluice answered
 * on the raw response itself, `ctx.respond = false` keeps Koa from answering again.
 *
 * @param ctx - Koa's context (the request)
 * @param response - the same context, where the reply goes (as `decideAndWrite` passes it)
 * @param outcome - what core decided
 * @returns `true` when the request may go on
 * @example
 * ```ts
 * const pass = writeContextOutcome(ctx, ctx, outcome);
 * ```
 */
export function writeContextOutcome<TContext extends WritableContextLike>(
  ctx: TContext,
  response: TContext,
  outcome: AnyHttpOutcome<(ctx: TContext, decision: never) => unknown>,
): Pass {
  if (outcome.kind === 'gone') {
    response.respond = false; // the client left while waiting: nothing to answer
    return false;
  }
  // Node's setHeader, as ctx.set ends in, without Koa 3's per-call arrays (text values only,
  // and nothing is sent before this middleware decides).
  const { res } = response;
  setHeaderList(res, outcome.headers);
  switch (outcome.kind) {
    case 'next':
      return true;
    case 'delay':
      // A client that left while held gets nothing: Koa must not answer it (a 404 to log).
      return heldOr(outcome.hold(res), () => (response.respond = false));
    case 'reply':
      response.status = outcome.status;
      // Before the body: Koa infers no type from a body once Content-Type is set.
      res.setHeader('Content-Type', outcome.type);
      response.body = outcome.body;
      return false;
    case 'handler':
      // If the handler throws, core answers on the raw response: Koa must not respond after it.
      return callFallback(
        outcome,
        [ctx, outcome.decision as never],
        res,
        () => (response.respond = false),
      ).then(() => false);
  }
}
