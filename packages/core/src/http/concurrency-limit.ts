import type { ConcurrencyDecision, ConcurrencyLimiter, Permit } from '../concurrency/concurrency-types';
import { RequestView, type HttpRequest } from '../keys/http-request';
import { DRY_RUN_NEXT, GONE, MISSING_KEY_STATUS, NEXT } from './common-outcomes';
import {
  resolveConcurrencyLimit,
  type ConcurrencyLimitOptions,
  type ConcurrencyOutcome,
  type ResolvedConcurrencyLimit,
} from './concurrency-options';
import type { HeaderList, HttpReply } from './http-options';
import { toSeconds } from './rate-limit-headers';
import { JSON_TYPE, prefersJson, rejectionBody, TEXT_TYPE } from './reply-body';
import { onResponseClose, releaseOnEnd, type ListenableResponse } from './response-close';
import { keyOf, notify, reportFailure, skipOf, templateKeyOf } from './user-callbacks';

/** One concurrency limit on a route, resolved once; adapters call `decide` per request. */
export interface HttpConcurrencyLimiter<TRequest, THandler> {
  readonly limiter: ConcurrencyLimiter;
  /**
   * Takes a permit for the request, or waits for one (`queue`), and ties its release to the
   * response: it goes back exactly once, when the handler has ended the response (not when the
   * client has read it) or its connection closes first.
   * Rejects only when the store fails and `onStoreError` cannot decide, or the limiter's `clock` breaks.
   *
   * @param request - the framework's request, handed to `key` and `skip` functions and events
   * @param http - the same request in the neutral shape
   * @param response - the raw response (Express `res`, Koa `ctx.res`, Fastify `reply.raw`)
   */
  decide(
    request: TRequest,
    http: HttpRequest,
    response: ListenableResponse,
  ): Promise<ConcurrencyOutcome<THandler>>;
  /**
   * The same without a promise when it can be had at once: a key of nginx variables, no `skip`,
   * an in-process store, and a free permit or no queue. `undefined` otherwise (nothing taken).
   */
  decideSync(
    request: TRequest,
    http: HttpRequest,
    response: ListenableResponse,
  ): ConcurrencyOutcome<THandler> | undefined;
}

/**
 * Builds the framework-neutral concurrency limit behind every adapter's `concurrencyLimit`
 * (nginx `limit_conn`): a permit before the handler, given back exactly once when the handler
 * has ended its response (not when the client has read it) or the connection closes first,
 * whatever the handler does (throws, never answers, the client leaves).
 *
 * A refusal is `status` (429; nginx answers 503) with a short body, `Retry-After` only when the
 * queue gives an estimate, or the `fallback`; a store failure that `onStoreError: 'fail-closed'`
 * refuses is a 503.
 *
 * @param options - the limit's options
 * @throws {@link SluiceConfigError} naming the first invalid option
 * @example
 * ```ts
 * const limit = createHttpConcurrencyLimiter({ key: '$http_user_id', max: 1 });
 * const outcome = await limit.decide(req, { remoteAddress: req.socket.remoteAddress, url: req.url, headers: req.headers }, res);
 * ```
 */
export function createHttpConcurrencyLimiter<TRequest, THandler extends (...args: never[]) => unknown>(
  options: ConcurrencyLimitOptions<TRequest, THandler>,
): HttpConcurrencyLimiter<TRequest, THandler> {
  const limit = resolveConcurrencyLimit(options);
  const { limiter, template } = limit;
  const syncable = template !== undefined && limit.skip === undefined;

  /**
   * With a queue: waits, giving up the moment the client leaves; a permit that came is tied to
   * the response as one taken at once is, and goes back if the client left as it came.
   */
  const waitFor = async (
    key: string,
    response: ListenableResponse,
  ): Promise<ConcurrencyDecision | undefined> => {
    const controller = new AbortController();
    const stop = onResponseClose(response, () => controller.abort());
    const decision = await limiter.acquire(key, { signal: controller.signal });
    stop();
    if (!decision.allowed) return decision.reason === 'cancelled' ? undefined : decision;
    return releaseOnEnd(response, decision.permit as Permit) ? decision : undefined;
  };

  /** The key when the fast paths can decide: nginx variables, no `skip`, a client still there, a key. */
  const fastKeyOf = (http: HttpRequest, view: RequestView): string | undefined =>
    syncable ? templateKeyOf(limit, http, view) : undefined;

  return {
    limiter,
    decideSync(request, http, response) {
      if (!syncable) return undefined;
      const view = new RequestView(http);
      const key = fastKeyOf(http, view);
      if (key === undefined) return undefined;
      const decision = limiter.acquireSync(key);
      if (decision === undefined) return undefined;
      if (decision.allowed) return admit(response, decision.permit as Permit);
      return refusal(limit, request, view, decision);
    },
    decide(request, http, response) {
      // A shared store without a queue: its key as decideSync takes it, without the general
      // path's awaits (one reaction per request).
      if (!syncable || limiter.queued) return decideAny(request, http, response);
      const view = new RequestView(http);
      const key = fastKeyOf(http, view);
      if (key === undefined) return decideAny(request, http, response);
      let decided: Promise<ConcurrencyDecision>;
      try {
        decided = limiter.acquire(key);
      } catch (error) {
        return Promise.reject(error);
      }
      return decided.then((decision) =>
        decision.allowed
          ? admit(response, decision.permit as Permit)
          : refusal(limit, request, view, decision),
      );
    },
  };

  async function decideAny(
    request: TRequest,
    http: HttpRequest,
    response: ListenableResponse,
  ): Promise<ConcurrencyOutcome<THandler>> {
    const view = new RequestView(http);
    if (limit.skip !== undefined && (await skipOf(limit, request))) return NEXT;
    // The connection is gone, so the client's address is unknown: keyed by it, the request would
    // have the empty key and pass (or share one count). Refused, whatever onMissingKey says.
    const gone = http.remoteAddress === undefined && limit.readsAddress;
    const key = gone ? '' : await keyOf(limit, request, view);
    const missing = gone ? 'reject' : key === '' ? limit.onMissingKey : undefined;
    if (missing === 'skip') return NEXT;
    if (missing === 'reject') {
      if (limit.dryRun) return DRY_RUN_NEXT;
      // As rateLimit: a missing key is the client's error (400); a client that is gone gets the
      // limit's own refusal.
      const { type, body } = rejectionBody(undefined, view.header('accept'));
      return { kind: 'reply', headers: [], status: gone ? limit.status : MISSING_KEY_STATUS, type, body };
    }
    if (limiter.queued) {
      const now = limiter.acquireSync(key);
      if (now !== undefined)
        return now.allowed ? admit(response, now.permit as Permit) : refusal(limit, request, view, now);
      const decision = await waitFor(key, response);
      if (decision === undefined) return GONE;
      // A waited-for permit is tied to the response by waitFor already.
      return decision.allowed ? NEXT : refusal(limit, request, view, decision);
    }
    const decision = await limiter.acquire(key);
    if (decision.allowed) return admit(response, decision.permit as Permit);
    return refusal(limit, request, view, decision);
  }
}

/**
 * Ties the permit's release to the response (see `releaseOnEnd`); a client that left while its
 * permit was asked for (a reset before Redis answered) gets nothing: its permit goes back at
 * once, and no handler runs for it without one, as a waiter that leaves the queue.
 */
function admit(response: ListenableResponse, permit: Permit): typeof NEXT | typeof GONE {
  return releaseOnEnd(response, permit) ? NEXT : GONE;
}

/** The reply to a request refused a permit (or, with `dryRun`, let through and reported). */
function refusal<TRequest, THandler>(
  limit: ResolvedConcurrencyLimit<TRequest, THandler>,
  request: TRequest,
  view: RequestView,
  decision: ConcurrencyDecision,
): ConcurrencyOutcome<THandler> {
  notify(limit, { request, decision, dryRun: limit.dryRun });
  if (limit.dryRun) return DRY_RUN_NEXT;
  const status = decision.reason === 'store-unavailable' ? 503 : limit.status;
  // Only an estimate the queue measured: without one, a client could not trust any number.
  const retryAfter = decision.retryAfterMs > 0 ? toSeconds(decision.retryAfterMs) : undefined;
  const headers: HeaderList = retryAfter === undefined ? [] : [['Retry-After', String(retryAfter)]];
  const { fallback } = limit;
  const accept = view.header('accept');
  if (fallback === undefined)
    return { kind: 'reply', headers, status, ...refusalBody(decision, retryAfter, accept) };
  if ('handler' in fallback) {
    const rejection: HttpReply = {
      kind: 'reply',
      headers,
      status,
      ...refusalBody(decision, retryAfter, accept),
    };
    return {
      kind: 'handler',
      headers,
      handler: fallback.handler,
      decision,
      rejection,
      reportError: (threw) => reportFailure(limit, request, 'fallback', { threw }, decision.key),
    };
  }
  const { reply } = fallback;
  return {
    kind: 'reply',
    headers: [...headers, ...reply.headers],
    status: reply.status,
    type: reply.type,
    body: reply.body,
  };
}

/** The short body of a refusal: JSON when the client prefers it, else one sentence. */
function refusalBody(
  decision: ConcurrencyDecision,
  retryAfter: number | undefined,
  accept: string,
): { type: string; body: string } {
  const unavailable = decision.reason === 'store-unavailable';
  const error = unavailable ? 'store_unavailable' : 'too_many_in_flight';
  const what = unavailable ? 'The concurrency limiter is unavailable' : 'Too many requests in progress';
  const message = retryAfter === undefined ? `${what}.` : `${what}, retry in ${retryAfter} s.`;
  if (prefersJson(accept)) return { type: JSON_TYPE, body: JSON.stringify({ error, message, retryAfter }) };
  return { type: TEXT_TYPE, body: `${message}\n` };
}
