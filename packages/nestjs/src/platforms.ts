import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  callFallback,
  SluiceConfigError,
  socketPeerAddress,
  type ConcurrencyOutcome,
  type HttpOutcome,
  type HttpRequest,
} from '@sluice/core';

/** What `true` / `false` mean: pass the request on, or stop (the reply was sent or the client left). */
export type Verdict = boolean | Promise<boolean>;

/**
 * A fallback handler of either kind of limit, as the platforms call it: a rate limit's receives
 * its `Decision`, a concurrency limit's its `ConcurrencyDecision` (`never` here admits both).
 */
export type Fallback = (request: unknown, response: unknown, decision: never) => unknown;

/** What a rate limit or a concurrency limit decided for a request. */
export type Outcome = HttpOutcome<Fallback> | ConcurrencyOutcome<Fallback>;

/** How one Nest platform's request and response map onto the core's neutral shapes. */
export interface Platform {
  /** The request as the core's HTTP layer reads it. */
  http(request: unknown): HttpRequest;
  /** Node's response under the platform's: its `close` gives a concurrency permit back. */
  raw(response: unknown): ServerResponse;
  /** Does what the outcome says on the platform's response. */
  apply(request: unknown, response: unknown, outcome: Outcome): Verdict;
}

interface ExpressRequest {
  readonly socket: Socket;
  readonly url: string;
  readonly originalUrl?: string;
  readonly headers: IncomingHttpHeaders;
  readonly query?: unknown;
  readonly baseUrl?: string;
  readonly route?: { readonly path?: unknown };
}

interface FastifyRequest {
  readonly raw: { readonly socket: Socket };
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly query?: unknown;
  readonly routeOptions?: { readonly url?: string };
}

interface FastifyReply {
  readonly raw: ServerResponse;
  header(name: string, value: string): unknown;
  code(status: number): FastifyReply;
  type(contentType: string): FastifyReply;
  send(body: string): unknown;
  hijack(): unknown;
}

/** `@nestjs/platform-express`: Node's own response API, as `@sluice/express` writes it. */
const express: Platform = {
  http(request) {
    const req = request as ExpressRequest;
    // `originalUrl`: a global prefix or router mount still keys on the full path. The address
    // is `undefined` once the client has reset (refused by an address-keyed limit), `$arg_`
    // reads what the app reads (`req.query`), and `$route` is the route Nest registered (a
    // guard runs after routing). Express matches a mount path ignoring case: its text is lower-cased.
    return {
      remoteAddress: socketPeerAddress(req.socket),
      url: req.originalUrl ?? req.url,
      headers: req.headers,
      query: () => req.query,
      route: () => {
        const path = req.route?.path;
        return typeof path === 'string' ? (req.baseUrl ?? '').toLowerCase() + path : undefined;
      },
    };
  },
  raw: (response) => response as ServerResponse,
  apply(request, response, outcome) {
    // The client left while waiting for a permit: nothing to answer.
    if (outcome.kind === 'gone') return false;
    const res = response as ServerResponse;
    for (const [name, value] of outcome.headers) res.setHeader(name, value);
    switch (outcome.kind) {
      case 'next':
        return true;
      case 'delay':
        return outcome.hold(res);
      case 'reply':
        res.statusCode = outcome.status;
        res.setHeader('Content-Type', outcome.type);
        res.end(outcome.body);
        return false;
      case 'handler':
        return callFallback(outcome, [request, res, outcome.decision as never], res).then(() => false);
    }
  },
};

/** `@nestjs/platform-fastify`: the reply API, as `@sluice/fastify` writes it. */
const fastify: Platform = {
  http(request) {
    const req = request as FastifyRequest;
    return {
      remoteAddress: socketPeerAddress(req.raw.socket),
      url: req.url,
      headers: req.headers,
      query: () => req.query,
      route: () => req.routeOptions?.url,
    };
  },
  raw: (response) => (response as FastifyReply).raw,
  apply(request, response, outcome) {
    const reply = response as FastifyReply;
    if (outcome.kind === 'gone') {
      reply.hijack(); // the client left while waiting for a permit: nothing more runs for it
      return false;
    }
    for (const [name, value] of outcome.headers) reply.header(name, value);
    switch (outcome.kind) {
      case 'next':
        return true;
      case 'delay':
        return outcome.hold(reply.raw).then((held) => {
          // The client left: take the reply out of Fastify's hands so nothing more runs for it.
          if (!held) reply.hijack();
          return held;
        });
      case 'reply':
        reply.code(outcome.status).type(outcome.type).send(outcome.body);
        return false;
      case 'handler':
        // If the handler throws, core answers on the raw response, out of Fastify's hands.
        return callFallback(outcome, [request, reply, outcome.decision as never], reply.raw, () =>
          reply.hijack(),
        ).then(() => false);
    }
  },
};

/**
 * The platform of Nest's HTTP adapter, by the name it gives itself (`getType()`), chosen once.
 *
 * @param type - `httpAdapter.getType()`
 * @throws SluiceConfigError for a platform sluice does not map
 */
export function platformOf(type: string): Platform {
  if (type === 'express') return express;
  if (type === 'fastify') return fastify;
  throw new SluiceConfigError(
    'platform',
    type,
    'sluice limits Nest applications on @nestjs/platform-express or @nestjs/platform-fastify',
  );
}
