import type { ServerResponse } from 'node:http';
import { SluiceConfigError } from '@sluice/core';
import {
  fromNodeRequest,
  fromRequestLike,
  notFoundHook,
  notFoundMiddleware,
  writeReplyOutcome,
  writeResponseOutcome,
  type AnyHttpOutcome,
  type HttpRequest,
  type NodeRequestLike,
  type NodeResponse,
  type Pass,
  type ReplyLike,
  type RequestLike,
} from '@sluice/core/adapter';

// Read once: a CommonJS build reads an import through getters at each use (per request here).
const [httpOfNode, httpOfReply] = [fromNodeRequest, fromRequestLike];

/** What `true` / `false` mean: pass the request on, or stop (the reply was sent or the client left). */
export type Verdict = Pass;

/**
 * A fallback handler of either kind of limit, as the platforms call it: a rate limit's receives
 * its `Decision`, a concurrency limit's its `ConcurrencyDecision` (`never` here admits both).
 */
export type Fallback = (request: unknown, response: unknown, decision: never) => unknown;

/** What a rate limit or a concurrency limit decided for a request. */
export type Outcome = AnyHttpOutcome<Fallback>;

/** How one Nest platform's request and response map onto the core's neutral shapes. */
export interface Platform {
  /** The request as the core's HTTP layer reads it. */
  http(request: unknown): HttpRequest;
  /** Node's response under the platform's: its `close` gives a concurrency permit back. */
  raw(response: unknown): ServerResponse;
  /** Does what the outcome says on the platform's response. */
  apply(request: unknown, response: unknown, outcome: Outcome): Verdict;
  /** Limits by `limits` (the module's) what no route of `app` answered (called at start: after the routes). */
  unmatched(app: unknown, limits: never): void;
}

/** `@nestjs/platform-express`: the request read and the response written by the same core code as `@sluice/express`'s. */
const express: Platform = {
  http: (request) => httpOfNode(request as NodeRequestLike),
  raw: (response) => response as ServerResponse,
  apply: (request, response, outcome) =>
    writeResponseOutcome(request, response as ServerResponse & NodeResponse, outcome),
  unmatched: (app, limits) => (app as { use(f: unknown): void }).use(notFoundMiddleware(limits)),
};

/** `@nestjs/platform-fastify`: the request read and the reply written by the same core code as `@sluice/fastify`'s. */
const fastify: Platform = {
  http: (request) => httpOfReply(request as RequestLike),
  raw: (response) => (response as ReplyLike).raw as ServerResponse,
  apply: (request, response, outcome) => writeReplyOutcome(request, response as ReplyLike, outcome),
  unmatched: (app, limits) =>
    (app as { addHook(name: string, f: unknown): void }).addHook('onRequest', notFoundHook(limits)),
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
