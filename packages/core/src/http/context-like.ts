import type { PeerSocket } from '../keys/client-address';
import type { HttpRequest } from '../keys/http-request';
import { NeutralRequest } from './neutral-request';

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
