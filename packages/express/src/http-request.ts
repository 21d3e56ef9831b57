import { socketPeerAddress, type HttpRequest } from '@sluice/core';
import type { Request } from 'express';

// Read once: a CommonJS build reads an import through getters at each use (once per request here).
const peerAddress = socketPeerAddress;

/** Express's request in core's neutral shape, for `rateLimit` and `concurrencyLimit` alike. */
export function httpRequestOf(req: Request): HttpRequest {
  return new ExpressRequest(req);
}

/**
 * The neutral shape as one object per request: `query` and `route` are its methods (core calls
 * them on it), not two closures per request.
 */
class ExpressRequest implements HttpRequest {
  readonly remoteAddress: string | undefined;
  readonly url: string;
  readonly headers: Request['headers'];

  constructor(private readonly req: Request) {
    this.remoteAddress = peerAddress(req.socket);
    // `originalUrl`: a router mounted at /shop still keys on the full path.
    this.url = req.originalUrl ?? req.url;
    this.headers = req.headers;
  }

  query(): unknown {
    return this.req.query;
  }

  route(): string | undefined {
    return matchedRoute(this.req);
  }
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
