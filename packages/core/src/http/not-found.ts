import { fromUnmatchedNodeRequest, type NodeRequestLike } from './node-request';
import { fromRequestLike, type RequestLike } from './request-like';
import {
  decideAndWrite,
  writeReplyOutcome,
  writeResponseOutcome,
  type AnyHttpOutcome,
  type HttpDecider,
  type NodeFallback,
  type NodeResponse,
  type Pass,
  type ReplyLike,
} from './write-outcome';
import type { ListenableResponse } from './response-close';

/** A callback-style middleware or hook: `next()` when the request goes on. */
export type PassingCallback<TRequest, TResponse> = (
  request: TRequest,
  response: TResponse,
  next: (error?: Error) => void,
) => void;

/**
 * The limits on every route, for the requests that match none, on Fastify (`@sluice/fastify`,
 * Nest's Fastify platform): an instance hook, which Fastify runs for every request and for its
 * not-found handler, limiting only the latter (`request.is404`: the matched routes have their
 * own hooks). `$route` is `NOT_FOUND_ROUTE` there.
 *
 * @param limits - the limits on every route: the same buckets count both
 * @example
 * ```ts
 * fastify.addHook('onRequest', notFoundHook(limits));
 * ```
 */
export function notFoundHook<
  TRequest extends RequestLike,
  TReply extends ReplyLike & { readonly raw: ListenableResponse },
>(
  limits: HttpDecider<TRequest, AnyHttpOutcome<NodeFallback<TRequest, TReply>>>,
): PassingCallback<TRequest, TReply> {
  const [decide, write] = [decideAndWrite, writeReplyOutcome];
  return passing<TRequest, TReply>((request, reply) =>
    request.is404 === true
      ? decide(limits, request, reply, fromRequestLike(request), reply.raw, write)
      : true,
  );
}

/**
 * The limits on every route, for the requests that match none, on an Express app (Nest's
 * Express platform): a middleware mounted after every route, which only requests no route
 * answered reach. `$route` is `NOT_FOUND_ROUTE` there.
 *
 * @param limits - the limits on every route: the same buckets count both
 * @example
 * ```ts
 * app.use(notFoundMiddleware(limits)); // after the routes, before the not-found handler
 * ```
 */
export function notFoundMiddleware<
  TRequest extends NodeRequestLike,
  TResponse extends NodeResponse & ListenableResponse,
>(
  limits: HttpDecider<TRequest, AnyHttpOutcome<NodeFallback<TRequest, TResponse>>>,
): PassingCallback<TRequest, TResponse> {
  const [decide, write] = [decideAndWrite, writeResponseOutcome];
  return passing<TRequest, TResponse>((req, res) =>
    decide(limits, req, res, fromUnmatchedNodeRequest(req), res, write),
  );
}

/** `gate` as a callback: `next` once it passes; nothing when it answered (the reply is sent, or the client left). */
function passing<TRequest, TResponse>(
  gate: (request: TRequest, response: TResponse) => Pass,
): PassingCallback<TRequest, TResponse> {
  return function sluiceNotFound(request, response, next) {
    const pass = gate(request, response);
    if (pass === true) next();
    // A decision that failed (the store, the limiter's clock) goes to the framework's error handling.
    else if (pass !== false)
      pass.then(
        (ok) => ok && next(),
        (error: unknown) => next(error as Error),
      );
  };
}
