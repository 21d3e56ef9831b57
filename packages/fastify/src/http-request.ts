import { socketPeerAddress, type HttpRequest } from '@sluice/core';
import type { FastifyRequest } from 'fastify';

/** Fastify's request in core's neutral shape, for the plugin and `concurrencyLimit` alike. */
export function httpRequestOf(request: FastifyRequest): HttpRequest {
  const { raw, url, headers } = request;
  return {
    remoteAddress: socketPeerAddress(raw.socket),
    url,
    headers,
    query: () => request.query,
    route: () => request.routeOptions.url,
  };
}
