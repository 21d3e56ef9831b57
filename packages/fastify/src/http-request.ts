import { socketPeerAddress, type HttpRequest } from '@sluice/core';
import type { FastifyRequest } from 'fastify';

// Read once: a CommonJS build reads an import through getters at each use (once per request here).
const peerAddress = socketPeerAddress;

/** Fastify's request in core's neutral shape, for the plugin and `concurrencyLimit` alike. */
export function httpRequestOf(request: FastifyRequest): HttpRequest {
  const { raw, url, headers } = request;
  return {
    remoteAddress: peerAddress(raw.socket),
    url,
    headers,
    query: () => request.query,
    route: () => request.routeOptions.url,
  };
}
