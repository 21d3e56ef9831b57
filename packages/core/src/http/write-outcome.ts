import type { HttpRequest } from '../keys/http-request';
import { callFallback, type RawResponse } from './call-fallback';
import type { AdaptiveOutcome } from './adaptive-options';
import type { ConcurrencyOutcome } from './concurrency-options';
import type { ClosableResponse } from './hold-request';
import type { HeaderList, HttpOutcome } from './http-options';
import type { ListenableResponse } from './response-close';

/** What a rate limit (`createHttpLimiter`), a concurrency limit or an adaptive limit decided for a request. */
export type AnyHttpOutcome<THandler> =
  HttpOutcome<THandler> | ConcurrencyOutcome<THandler> | AdaptiveOutcome<THandler>;

/**
 * What an adapter does next with a request: `true` pass it on, `false` stop (the reply is sent,
 * or the client left); a promise when the decision or a fallback handler takes time.
 */
export type Pass = boolean | Promise<boolean>;

/**
 * The per-request part of both HTTP limiters (`createHttpLimiter`, `createHttpConcurrencyLimiter`),
 * as {@link decideAndWrite} calls it; a rate limit ignores `response`.
 */
export interface HttpDecider<TRequest, TOutcome> {
  /** `raw`: Node's response under the framework's; `response`: the framework's own (a `countWhen` function gets it). */
  decideSync(
    request: TRequest,
    http: HttpRequest,
    raw: ListenableResponse,
    response?: unknown,
  ): TOutcome | undefined;
  decide(
    request: TRequest,
    http: HttpRequest,
    raw: ListenableResponse,
    response?: unknown,
  ): Promise<TOutcome>;
}

/**
 * Decides for one request — synchronously when core can (an in-process store, a key of nginx
 * variables), so the common case costs no promise — and hands the outcome to `write`.
 *
 * @param decider - the limit
 * @param request - the framework's request (Express `req`, Koa `ctx`, Fastify `request`)
 * @param response - the framework's response, passed on to `write` (Express `res`, Fastify `reply`)
 *   and to the decider (a `countWhen` function gets it)
 * @param http - the same request in the neutral shape
 * @param raw - Node's response under it (a concurrency permit goes back at its `end()` or `close`)
 * @param write - writes the outcome on the framework's response
 * @example
 * ```ts
 * const pass = decideAndWrite(limit, req, res, httpRequestOf(req), res, writeResponseOutcome);
 * ```
 */
export function decideAndWrite<TRequest, TResponse, TOutcome>(
  decider: HttpDecider<TRequest, TOutcome>,
  request: TRequest,
  response: TResponse,
  http: HttpRequest,
  raw: ListenableResponse,
  write: (request: TRequest, response: TResponse, outcome: TOutcome) => Pass,
): Pass {
  const outcome = decider.decideSync(request, http, raw, response);
  if (outcome !== undefined) return write(request, response, outcome);
  return decider.decide(request, http, raw, response).then((decided) => write(request, response, decided));
}

/**
 * Sets `headers` in order, one `setHeader` (or Fastify `header`) call each.
 *
 * @param target - Node's response, or anything with its `setHeader`
 * @param headers - the outcome's headers
 */
export function setHeaderList(
  target: { setHeader(name: string, value: string): unknown },
  headers: HeaderList,
): void {
  // An indexed loop: no iterator per request on the path every admitted request takes.
  for (let i = 0; i < headers.length; i++) {
    const [name, value] = headers[i] as readonly [string, string];
    target.setHeader(name, value);
  }
}

/** Node's `http.ServerResponse`, as {@link writeResponseOutcome} writes on it. */
export type NodeResponse = RawResponse & ClosableResponse;

/** A fallback handler called as Express calls middleware: `(request, response, decision)`. */
export type NodeFallback<TRequest, TResponse> = (
  request: TRequest,
  response: TResponse,
  decision: never,
) => unknown;

/**
 * A fallback handler as an adapter's users write it for a Node framework: replies in place of the
 * refusal on the framework's own request and response (Express `req`, `res`; Fastify `request`,
 * `reply`), with the decision at hand (a `Decision`, `ConcurrencyDecision` or `AdaptiveDecision`).
 */
export type DecisionFallback<TRequest, TResponse, TDecision> = (
  request: TRequest,
  response: TResponse,
  decision: TDecision,
) => unknown;

/**
 * Does what core decided on Node's own response API (identical on Express 4 and 5, and under
 * Nest's Express platform): sets the headers, then passes the request on, holds it (`delay`),
 * sends the reply, or calls the fallback handler with `(request, response, decision)` — a handler
 * that throws still leaves the client a reply (see `callFallback`).
 *
 * @param request - the handler's first argument (Express `req`)
 * @param res - Node's response
 * @param outcome - what core decided
 * @returns `true` when the request may go on
 * @example
 * ```ts
 * const pass = writeResponseOutcome(req, res, outcome);
 * ```
 */
export function writeResponseOutcome<TRequest, TResponse extends NodeResponse>(
  request: TRequest,
  res: TResponse,
  outcome: AnyHttpOutcome<NodeFallback<TRequest, TResponse>>,
): Pass {
  if (outcome.kind === 'gone') return false; // the client left while waiting: nothing to answer
  setHeaderList(res, outcome.headers);
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
}

/** A reply with Fastify's API (`@sluice/fastify`, Nest's Fastify platform): what {@link writeReplyOutcome} uses. */
export interface ReplyLike {
  readonly raw: NodeResponse;
  /** Whether a reply was sent or hijacked (Fastify 4 and 5). */
  readonly sent?: boolean;
  header(name: string, value: string): unknown;
  code(status: number): { type(contentType: string): { send(body: string): unknown } };
  /** Sends a payload, serialized as the framework serializes a handler's return value. */
  send(payload?: unknown): unknown;
  /** Takes the response out of the framework's hands: nothing more runs for it. */
  hijack(): unknown;
}

/**
 * Does what core decided on a Fastify reply: the headers, then pass on, hold (`delay`), send the
 * reply, or call the fallback handler with `(request, reply, decision)`. When the client left
 * (while held or waiting for a permit), or a handler threw and core answered on the raw
 * response, the reply is hijacked so Fastify sends nothing more.
 *
 * @param request - the handler's first argument (Fastify `request`)
 * @param reply - the reply
 * @param outcome - what core decided
 * @returns `true` when the request may go on
 * @example
 * ```ts
 * const pass = writeReplyOutcome(request, reply, outcome);
 * ```
 */
export function writeReplyOutcome<TRequest, TReply extends ReplyLike>(
  request: TRequest,
  reply: TReply,
  outcome: AnyHttpOutcome<NodeFallback<TRequest, TReply>>,
): Pass {
  if (outcome.kind === 'gone') {
    reply.hijack();
    return false;
  }
  const { headers } = outcome;
  for (let i = 0; i < headers.length; i++) {
    const [name, value] = headers[i] as readonly [string, string];
    reply.header(name, value);
  }
  switch (outcome.kind) {
    case 'next':
      return true;
    case 'delay':
      return heldOr(outcome.hold(reply.raw), () => reply.hijack());
    case 'reply':
      reply.code(outcome.status).type(outcome.type).send(outcome.body);
      return false;
    case 'handler':
      return callFallback(
        { ...outcome, handler: sendingReturned(outcome.handler, reply) },
        [request, reply, outcome.decision as never],
        reply.raw,
        () => reply.hijack(),
      ).then(() => false);
  }
}

/**
 * What a `delay` outcome's `hold` tells, with `gone` called first when the client left while held:
 * the framework must then answer nothing (Fastify: `reply.hijack()`; Koa: `ctx.respond = false`).
 *
 * @param held - `outcome.hold(response)`
 * @param gone - takes the response out of the framework's hands
 */
export function heldOr(held: Promise<boolean>, gone: () => unknown): Promise<boolean> {
  return held.then((pass) => {
    if (!pass) gone();
    return pass;
  });
}

/**
 * A Fastify fallback handler as a route handler is: what it returns is sent when it sent nothing
 * itself (`reply` returned: it sends later, as Fastify's own rule is). Nothing sent and nothing
 * returned is a failed fallback (the default refusal goes out, reported): taken for sent, the
 * request waited for ever.
 */
function sendingReturned<THandler extends (...args: never[]) => unknown>(
  handler: THandler,
  reply: ReplyLike,
): THandler {
  return (async (...args: Parameters<THandler>) => {
    const returned = await handler(...args);
    const { raw } = reply;
    if (returned === reply || reply.sent === true || raw.headersSent || raw.writableEnded) return;
    if (returned === undefined)
      throw new Error(
        'the fallback sent no reply and returned nothing to send: return the body, or call reply.send()',
      );
    reply.send(returned);
  }) as THandler;
}
