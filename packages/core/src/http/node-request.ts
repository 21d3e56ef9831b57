import type { PeerSocket } from '../keys/client-address';
import { NOT_FOUND_ROUTE, type HttpRequest } from '../keys/http-request';
import { decodeKeyText } from '../keys/key-text';
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
  readonly rawHeaders?: readonly string[];
  /** Express: the query as the app parses it. */
  readonly query?: unknown;
  /** Express: the text that matched the mount path of the router running the route. */
  readonly baseUrl?: string | undefined;
  /** Express: the route being run (its `path` is the pattern). */
  readonly route?: { readonly path?: unknown } | undefined;
  /** Express: the app running the route; with its `parent`s, their settings say how the mount path matched. */
  readonly app?: ExpressAppLike | undefined;
}

/** What `$route` reads of an Express app: a setting, and the app it is mounted in (`app.use(path, sub)`). */
export interface ExpressAppLike {
  enabled(setting: string): boolean;
  readonly parent?: ExpressAppLike | undefined;
}

/**
 * A {@link NodeRequestLike} in core's neutral shape, for the limits of `@sluice/express` and of
 * Nest on Express alike: the peer's address (`undefined` once the client has reset), the URL as
 * received (`originalUrl`: a router mounted at `/shop` still keys on the full path), its
 * headers; the parsed query and the route read only when a key asks.
 *
 * The route is the mount path and the pattern (`/shop` + `/sku/:id`), `undefined` outside a
 * route (`app.use`). Express keeps no pattern of a mount path, only the text that matched it
 * (`baseUrl`, as the client spelled it), so that text is made canonical: one route, one bucket,
 * whatever the spelling.
 *
 * - Percent-decoded as a path segment is ({@link decodeKeyText}, `%2F` kept): Express decodes a
 *   mount parameter (`/t/%61cme` is tenant `acme`), so a parameter counts by its value
 *   (`/t/acme/sku/:id`); a static segment matches only as written, and decodes alike.
 * - Lower-cased unless every app from `req.app` up its `parent`s has `case sensitive routing`
 *   on: each mount is matched by the app that mounted it, not by the sub-app running the route.
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
    super(req, req.socket, req.originalUrl ?? req.url ?? '/', req.headers, req.rawHeaders);
  }

  query(): unknown {
    return this.source.query;
  }

  route(): string | undefined {
    const { source } = this;
    const path = source.route?.path;
    if (path === undefined) return undefined;
    const mount = source.baseUrl ?? '';
    if (mount === '') return String(path);
    // Decoded before lower-casing: '%41' is 'A', which a case-insensitive mount matches as 'a'.
    const decoded = mount.includes('%') ? decodeKeyText(mount, { keep: '/' }) : mount;
    return (caseSensitive(source.app) ? decoded : decoded.toLowerCase()) + String(path);
  }
}

/**
 * A request that matched no route of an Express app (a middleware after every route): its
 * `$route` is {@link NOT_FOUND_ROUTE}, one value for every such request.
 *
 * @param req - Node's request, as Express hands it over
 */
export function fromUnmatchedNodeRequest(req: NodeRequestLike): HttpRequest {
  return new UnmatchedNodeRequest(req);
}

class UnmatchedNodeRequest extends FromNodeRequest {
  override route(): string {
    return NOT_FOUND_ROUTE;
  }
}

/** Whether every app from `app` up to the top one matches case-sensitively: only then does case tell mounts apart. */
function caseSensitive(app: ExpressAppLike | undefined): boolean {
  if (app === undefined) return false;
  for (let at: ExpressAppLike | undefined = app; at !== undefined; at = at.parent)
    if (!at.enabled('case sensitive routing')) return false;
  return true;
}
