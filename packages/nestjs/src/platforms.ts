import type { ServerResponse } from 'node:http';
import { SluiceConfigError } from '@sluice/core';
import {
  createHttpAdaptiveLimiter,
  createHttpConcurrencyLimiter,
  decideAndWrite,
  fromNodeRequest,
  fromRequestLike,
  notFoundHook,
  notFoundMiddleware,
  writeReplyOutcome,
  writeResponseOutcome,
  type AdaptiveLimitOptions,
  type AnyHttpOutcome,
  type ConcurrencyLimitOptions,
  type HttpDecider,
  type HttpRequest,
  type NodeRequestLike,
  type NodeResponse,
  type Pass,
  type ReplyLike,
  type RequestLike,
} from '@sluice/core/adapter';
import type { AdaptiveLimitMetadata, ConcurrencyLimitMetadata } from './decorators';

// Read once: a CommonJS build reads an import through getters at each use (per request here).
const [httpOfNode, httpOfReply, decideWrite] = [fromNodeRequest, fromRequestLike, decideAndWrite];

/** What `true` / `false` mean: pass the request on, or stop (the reply was sent or the client left). */
export type Verdict = Pass;

/** A fallback handler of any kind of limit, as the platforms call it (`never` admits every decision). */
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

/** The platform of Nest's HTTP adapter by `httpAdapter.getType()`; a `SluiceConfigError` for another. */
export function platformOf(type: string): Platform {
  if (type === 'express') return express;
  if (type === 'fastify') return fastify;
  throw new SluiceConfigError(
    'platform',
    type,
    'sluice limits Nest applications on @nestjs/platform-express or @nestjs/platform-fastify',
  );
}

/** Runs one limit for a request: `true` when it may go on. */
export type Gate = (request: unknown, response: unknown) => Verdict;

/** The gate of a limit from core on Nest's `platform` (looked up at the first request if the module never started). */
export function platformGate(decider: HttpDecider<unknown, Outcome>, platform: () => Platform): Gate {
  return (request, response) => {
    const on = platform();
    return decideWrite(decider, request, response, on.http(request), on.raw(response), on.apply);
  };
}

/**
 * The gate of one `@ConcurrencyLimit`, built once, at start: a permit tied to the end (or close) of
 * Node's response; `scope` (`Controller` or `Controller.method`) is its prefix unless one is given.
 */
export function concurrencyGate(
  metadata: ConcurrencyLimitMetadata,
  scope: string,
  platform: () => Platform,
): Gate {
  const options = metadata.limit as ConcurrencyLimitOptions<unknown, Fallback>;
  // As @RateLimit's buckets: two decorators on one shared store keep their own counts.
  const own = options.limiter === undefined && options.prefix === undefined;
  const limit = createHttpConcurrencyLimiter(own ? { ...options, prefix: `sluice:${scope}` } : options);
  return platformGate(limit, platform);
}

/** The gate of one adaptive limit (`@AdaptiveLimit`, the module's `adaptive`), as `@ConcurrencyLimit`'s. */
export function adaptiveGate(
  metadata: AdaptiveLimitMetadata,
  _scope: string,
  platform: () => Platform,
): Gate {
  return platformGate(
    createHttpAdaptiveLimiter(metadata.limit as AdaptiveLimitOptions<unknown, Fallback>),
    platform,
  );
}
