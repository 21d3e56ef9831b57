import type { PeerSocket } from '../keys/client-address';
import type { HttpRequest } from '../keys/http-request';
import { NeutralRequest } from './neutral-request';

/**
 * The request that goes with a `NodeResponse`: Node's, with what Express adds to it, as
 * `@sluice/express` and Nest on `@nestjs/platform-express` hand it over.
 */
export interface NodeRequestLike {
  readonly socket: PeerSocket | null | undefined;
  readonly url?: string | undefined;
  /** Express: the URL as received, before a router mount took its path off `url`. */
  readonly originalUrl?: string | undefined;
  readonly headers: HttpRequest['headers'];
  /** Express: the query as the app parses it. */
  readonly query?: unknown;
  /** Express: the text that matched the mount path of the router running the route. */
  readonly baseUrl?: string | undefined;
  /** Express: the route being run (its `path` is the pattern). */
  readonly route?: { readonly path?: unknown } | undefined;
  /** Express: the app, whose `case sensitive routing` setting says how the mount path matched. */
  readonly app?: { enabled(setting: string): boolean } | undefined;
}

/**
 * A {@link NodeRequestLike} in core's neutral shape, for the limits of `@sluice/express` and of
 * Nest on Express alike: the peer's address (`undefined` once the client has reset), the URL as
 * received (`originalUrl`: a router mounted at `/shop` still keys on the full path), its
 * headers; the parsed query and the route read only when a key asks.
 *
 * The route is the mount path and the pattern (`/shop` + `/sku/:id`), `undefined` outside a
 * route (`app.use`). Express matches a mount path ignoring case unless `case sensitive routing`
 * is set, so the mount path's text (`baseUrl`, as the client spelled it) is lower-cased unless
 * that setting is on: one route, one bucket, whatever the spelling.
 *
 * @param req - Node's request, as Express hands it over
 * @example
 * ```ts
 * const http = fromNodeRequest(req); // http.route() → '/shop/sku/:id'
 * ```
 */
export function fromNodeRequest(req: NodeRequestLike): HttpRequest {
  return new FromNodeRequest(req);
}

/** Node's request with Express's additions: the URL before any mount, the mount path and pattern. */
class FromNodeRequest extends NeutralRequest<NodeRequestLike> {
  constructor(req: NodeRequestLike) {
    super(req, req.socket, req.originalUrl ?? req.url ?? '/', req.headers);
  }

  query(): unknown {
    return this.source.query;
  }

  route(): string | undefined {
    const { source } = this;
    const path = source.route?.path;
    if (path === undefined) return undefined;
    const mount = source.baseUrl ?? '';
    const base = source.app?.enabled('case sensitive routing') === true ? mount : mount.toLowerCase();
    return base + String(path);
  }
}
