import { socketPeerAddress, type HttpRequest } from '@sluice/core';
import type { Context } from 'koa';

// Read once: a CommonJS build reads an import through getters at each use (once per request here).
const peerAddress = socketPeerAddress;

/** Koa's context in core's neutral shape, for `rateLimit` and `concurrencyLimit` alike. */
export function httpRequestOf(ctx: Context): HttpRequest {
  const { req } = ctx;
  return {
    remoteAddress: peerAddress(req.socket),
    // `originalUrl`: koa-mount and routers rewrite `ctx.url`; the key reads the full path.
    url: ctx.originalUrl,
    headers: req.headers,
    query: () => ctx.query,
    // @koa/router's name for the route pattern it is running (koa-router's too).
    route: () => {
      const route: unknown = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      return route === undefined ? undefined : String(route);
    },
  };
}
