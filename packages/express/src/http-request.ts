import { socketPeerAddress, type HttpRequest } from '@sluice/core';
import type { Request } from 'express';

// Read once: a CommonJS build reads an import through getters at each use (once per request here).
const peerAddress = socketPeerAddress;

/** Express's request in core's neutral shape, for `rateLimit` and `concurrencyLimit` alike. */
export function httpRequestOf(req: Request): HttpRequest {
  return {
    remoteAddress: peerAddress(req.socket),
    // `originalUrl`: a router mounted at /shop still keys on the full path.
    url: req.originalUrl ?? req.url,
    headers: req.headers,
    query: () => req.query,
    route: () => matchedRoute(req),
  };
}

/**
 * The pattern of the route being run, with the path its router was mounted at (`/shop` +
 * `/sku/:id`); `undefined` outside a route (`app.use`). `baseUrl` is the text that matched the
 * mount path, which Express matches ignoring case unless `case sensitive routing` is set.
 */
function matchedRoute(req: Request): string | undefined {
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  if (path === undefined) return undefined;
  const base = req.app?.enabled('case sensitive routing') ? req.baseUrl : req.baseUrl.toLowerCase();
  return base + String(path);
}
