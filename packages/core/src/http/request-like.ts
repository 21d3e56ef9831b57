import type { PeerSocket } from '../keys/client-address';
import { NOT_FOUND_ROUTE, type HttpRequest } from '../keys/http-request';
import { NeutralRequest } from './neutral-request';

/**
 * The request that goes with a `ReplyLike`: Fastify's, as its hooks and Nest on
 * `@nestjs/platform-fastify` hand it over. Node's request is `raw`; the route Fastify matched
 * is `routeOptions.url`, {@link NOT_FOUND_ROUTE} when none did (`is404`).
 */
export interface RequestLike {
  readonly raw: { readonly socket: PeerSocket | null | undefined; readonly rawHeaders?: readonly string[] };
  readonly url: string;
  readonly headers: HttpRequest['headers'];
  readonly query?: unknown;
  readonly routeOptions?: { readonly url?: string | undefined };
  /** Whether Fastify runs its not-found handler for it: no route matched. */
  readonly is404?: boolean;
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

/** Fastify's request: the URL it routed, the route pattern it matched. */
class FromRequestLike extends NeutralRequest<RequestLike> {
  constructor(request: RequestLike) {
    super(request, request.raw.socket, request.url, request.headers, request.raw.rawHeaders);
  }

  query(): unknown {
    return this.source.query;
  }

  route(): string | undefined {
    const { source } = this;
    return source.is404 === true ? NOT_FOUND_ROUTE : source.routeOptions?.url;
  }
}
