import { socketPeerAddress, type HttpRequest } from '@sluice/core';
import type { FastifyRequest } from 'fastify';

// Read once: a CommonJS build reads an import through getters at each use (once per request here).
const peerAddress = socketPeerAddress;

/** Fastify's request in core's neutral shape, for the plugin and `concurrencyLimit` alike. */
export function httpRequestOf(request: FastifyRequest): HttpRequest {
  return new FastifyHttpRequest(request);
}

/**
 * The neutral shape as one object per request: `query` and `route` are its methods (core calls
 * them on it), not two closures per request.
 */
class FastifyHttpRequest implements HttpRequest {
  readonly remoteAddress: string | undefined;
  readonly url: string;
  readonly headers: FastifyRequest['headers'];

  constructor(private readonly request: FastifyRequest) {
    this.remoteAddress = peerAddress(request.raw.socket);
    this.url = request.url;
    this.headers = request.headers;
  }

  query(): unknown {
    return this.request.query;
  }

  route(): string | undefined {
    return this.request.routeOptions.url;
  }
}
