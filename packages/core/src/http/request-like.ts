import { socketPeerAddress, type PeerSocket } from '../keys/client-address';
import type { HttpRequest } from '../keys/http-request';

/**
 * The request that goes with a `ReplyLike`: Fastify's, as its hooks and Nest on
 * `@nestjs/platform-fastify` hand it over. Node's request is `raw`; the route Fastify matched
 * is `routeOptions.url`.
 */
export interface RequestLike {
  readonly raw: { readonly socket: PeerSocket | null | undefined };
  readonly url: string;
  readonly headers: HttpRequest['headers'];
  readonly query?: unknown;
  readonly routeOptions?: { readonly url?: string | undefined };
}

/**
 * A {@link RequestLike} in core's neutral shape, for the limits of `@sluice/fastify` and of Nest
 * on Fastify alike: the peer's address (`undefined` once the client has reset), the URL Fastify
 * routed, its headers; the parsed query and the route pattern read only when a key asks.
 *
 * @param request - Fastify's request
 * @example
 * ```ts
 * const http = fromRequestLike(request); // http.route() → '/items/:id'
 * ```
 */
export function fromRequestLike(request: RequestLike): HttpRequest {
  return new FromRequestLike(request);
}

/**
 * One object per request: `query` and `route` are its methods (core calls them on it), not two
 * closures per request.
 */
class FromRequestLike implements HttpRequest {
  readonly remoteAddress: string | undefined;
  readonly url: string;
  readonly headers: HttpRequest['headers'];

  constructor(private readonly request: RequestLike) {
    this.remoteAddress = socketPeerAddress(request.raw.socket);
    this.url = request.url;
    this.headers = request.headers;
  }

  query(): unknown {
    return this.request.query;
  }

  route(): string | undefined {
    return this.request.routeOptions?.url;
  }
}
