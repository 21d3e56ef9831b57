import { socketPeerAddress, type HttpRequest } from '@sluice/core';
import type { Context } from 'koa';

// Read once: a CommonJS build reads an import through getters at each use (once per request here).
const peerAddress = socketPeerAddress;

/** Koa's context in core's neutral shape, for `rateLimit` and `concurrencyLimit` alike. */
export function httpRequestOf(ctx: Context): HttpRequest {
  return new KoaRequest(ctx);
}

/**
 * The neutral shape as one object per request: `query` and `route` are its methods (core calls
 * them on it), not two closures per request.
 */
class KoaRequest implements HttpRequest {
  readonly remoteAddress: string | undefined;
  readonly url: string;
  readonly headers: Context['req']['headers'];

  constructor(private readonly ctx: Context) {
    const { req } = ctx;
    this.remoteAddress = peerAddress(req.socket);
    // `originalUrl`: koa-mount and routers rewrite `ctx.url`; the key reads the full path.
    this.url = ctx.originalUrl;
    this.headers = req.headers;
  }

  query(): unknown {
    return this.ctx.query;
  }

  /** @koa/router's name for the route pattern it is running (koa-router's too). */
  route(): string | undefined {
    const route: unknown = (this.ctx as { _matchedRoute?: unknown })._matchedRoute;
    return route === undefined ? undefined : String(route);
  }
}
