import type { AdaptiveHandlerOutcome } from './adaptive-options';
import type { ConcurrencyHandlerOutcome } from './concurrency-options';
import type { HeaderList, HttpHandlerOutcome, HttpReply, MaybePromise } from './http-options';

/**
 * A fallback handler of the Fetch-API adapters: the `Response` to send in place of the refusal
 * (Hono's `(c, decision) => c.json(…)`, a Fetch handler's `(request, decision) => new Response(…)`).
 */
export type FetchFallback<TRequest, TDecision> = (
  request: TRequest,
  decision: TDecision,
) => MaybePromise<Response>;

/**
 * The status of the answer to a client that left while its request waited (nginx logs 499,
 * "client closed request"): no one reads it, a log does.
 */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * Calls the fallback handler of a `handler` outcome: its `Response`, with the rate-limit headers
 * it did not set itself unless they are on Node's response already (`written`). A handler that
 * throws, rejects or returns no `Response` is reported (`onCallbackError`, source `'fallback'`),
 * and `refuse` builds the default refusal instead, without anything the handler had set.
 *
 * @param outcome - the `handler` outcome
 * @param request - the handler's first argument (Hono's `c`, the Fetch `Request`)
 * @param refuse - builds the default refusal
 * @param written - the outcome's headers are on Node's response already
 */
export async function callFetchFallback<TRequest>(
  outcome:
    | HttpHandlerOutcome<(request: TRequest, decision: never) => unknown>
    | ConcurrencyHandlerOutcome<(request: TRequest, decision: never) => unknown>
    | AdaptiveHandlerOutcome<(request: TRequest, decision: never) => unknown>,
  request: TRequest,
  refuse: (rejection: HttpReply) => Response,
  written: boolean,
): Promise<Response> {
  try {
    // Awaited inside the try: a handler that throws synchronously or rejects lands in the catch.
    const answer = await outcome.handler(request, outcome.decision as never);
    if (isResponse(answer)) return written ? answer : withHeaders(answer, outcome.headers);
    throw new TypeError(
      `the fallback returned ${typeof answer}, not a Response (return c.json(…) or new Response(…))`,
    );
  } catch (error) {
    outcome.reportError(error);
  }
  return refuse(outcome.rejection);
}

/** A `Response` of any realm or runtime (`@hono/node-server` puts its own in place of Node's). */
function isResponse(value: unknown): value is Response {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Response).status === 'number' &&
    typeof (value as Response).headers?.has === 'function'
  );
}

/**
 * A reply as a Fetch `Response`: `status`, the headers in order (a later one of the same name
 * replaces an earlier: a static fallback's headers may override the rate-limit ones), then
 * `Content-Type`.
 *
 * @param reply - a `reply` outcome
 * @example
 * ```ts
 * if (outcome.kind === 'reply') return replyResponse(outcome);
 * ```
 */
export function replyResponse(reply: HttpReply): Response {
  const headers = new Headers();
  for (const [name, value] of reply.headers) headers.set(name, value);
  headers.set('Content-Type', reply.type);
  return new Response(reply.body, { status: reply.status, headers });
}

/**
 * The headers of a reply as one record, then `Content-Type`, for a framework's reply builder
 * (Hono's `c.body(body, status, headers)`), which sets them in order: a later header replaces
 * an earlier one of the same name.
 *
 * @param reply - a `reply` outcome
 * @example
 * ```ts
 * return c.body(outcome.body, outcome.status, replyHeaders(outcome));
 * ```
 */
export function replyHeaders(reply: HttpReply): Record<string, string> {
  // No prototype: a header a static fallback names `__proto__` is a header like any other.
  const record = Object.create(null) as Record<string, string>;
  for (const [name, value] of reply.headers) record[name] = value;
  record['Content-Type'] = reply.type;
  return record;
}

/**
 * Adds to a handler's `Response` each of `headers` it does not carry already (a handler may set
 * its own, as it may on Node's response): in place, or on a copy when its headers are immutable
 * (a `Response.redirect`, a `fetch` result passed on).
 *
 * @param response - the handler's response
 * @param headers - the outcome's headers
 * @returns `response`, or its copy with the headers
 * @example
 * ```ts
 * return withHeaders(await handler(request), outcome.headers);
 * ```
 */
export function withHeaders(response: Response, headers: HeaderList): Response {
  let target = response;
  // An indexed loop: no iterator per request on the path every admitted request takes.
  for (let i = 0; i < headers.length; i++) {
    const [name, value] = headers[i] as readonly [string, string];
    if (target.headers.has(name)) continue;
    try {
      target.headers.set(name, value);
    } catch {
      target = new Response(target.body, target);
      target.headers.set(name, value);
    }
  }
  return target;
}
