import type { AdaptiveDecision, AdaptiveLimiter, AdaptivePermit } from '../adaptive/adaptive-types';
import { RequestView, type HttpRequest } from '../keys/http-request';
import {
  resolveAdaptiveLimit,
  type AdaptiveLimitOptions,
  type AdaptiveOutcome,
  type ResolvedAdaptiveLimit,
} from './adaptive-options';
import { DRY_RUN_NEXT, GONE, NEXT } from './common-outcomes';
import type { HeaderList, HttpReply } from './http-options';
import { toSeconds } from './rate-limit-headers';
import { JSON_TYPE, prefersJson, TEXT_TYPE } from './reply-body';
import { onResponseClose, releaseOnEnd, type ListenableResponse } from './response-close';
import { notify, reportFailure, skipOf } from './user-callbacks';

/** One adaptive limit, resolved once; adapters call `decide` (or `decideSync`) per request. */
export interface HttpAdaptiveLimiter<TRequest, THandler> {
  /** The limiter behind it (given as `limiter`, or made from the options): its `limit()`, `stats()`. */
  readonly limiter: AdaptiveLimiter;
  /**
   * Takes a permit for the request (or waits in the limiter's queue) and ties its release to
   * the response: it goes back exactly once, when the handler has ended the response or its
   * connection closes first.
   */
  decide(
    request: TRequest,
    http: HttpRequest,
    response: ListenableResponse,
  ): Promise<AdaptiveOutcome<THandler>>;
  /** The same without a promise when it can be had at once (no `skip`, no wait): `undefined` otherwise (nothing taken). */
  decideSync(
    request: TRequest,
    http: HttpRequest,
    response: ListenableResponse,
  ): AdaptiveOutcome<THandler> | undefined;
}

/** What the response reads when the permit goes back (Node's `ServerResponse` has both). */
interface EndedResponse {
  readonly writableEnded?: boolean;
  readonly statusCode?: number;
}

/**
 * Builds the framework-neutral adaptive limit behind every adapter's `adaptiveLimit`: a permit
 * of an adaptive limiter before the handler, given back exactly once when the handler has ended
 * its response or the connection closes first; the latency it measures is acquire to the end
 * of the response.
 *
 * How a request ends tells the limiter what its latency means:
 * - the response ended with a status below 500: measured;
 * - it ended with a 5xx (the handler threw, and the framework answered 500; or a dependency
 *   failed): `ignore` — a failure's latency is not the work's (a request that fails at once would
 *   read as a fast backend and raise the limit);
 * - the connection closed before the response ended (the client gave up, a reset, a timeout):
 *   `dropped` — a client that stops waiting is the plainest sign of too much latency, as a
 *   deadline exceeded is to Netflix's gRPC limiter (AIMD and Vegas shrink on it).
 *
 * A refusal is `status` (503) with `Retry-After` (the limiter's estimate, in whole seconds,
 * at least 1) and a short body, or the `fallback`.
 *
 * @param options - the limit's options
 * @throws {@link SluiceConfigError} naming the first invalid option
 * @example
 * ```ts
 * const limit = createHttpAdaptiveLimiter({ shares: { checkout: 0.7, browse: 0.3 }, priority: (req: { url: string }) => (req.url.startsWith('/checkout') ? 'checkout' : 'browse') });
 * const outcome = await limit.decide(req, { remoteAddress: req.socket.remoteAddress, url: req.url, headers: req.headers }, res);
 * ```
 */
export function createHttpAdaptiveLimiter<TRequest, THandler extends (...args: never[]) => unknown>(
  options: AdaptiveLimitOptions<TRequest, THandler> = {},
): HttpAdaptiveLimiter<TRequest, THandler> {
  const limit = resolveAdaptiveLimit(options);
  const { limiter, dryRun } = limit;
  const acquireOptions = dryRun ? { dryRun: true } : undefined;

  const partitionOf = (request: TRequest): string | undefined => {
    if (limit.priority === undefined) return undefined;
    try {
      const name = limit.priority(request);
      return typeof name === 'string' ? name : undefined;
    } catch (threw) {
      reportFailure(limit, request, 'priority', { threw });
      return undefined;
    }
  };

  const outcomeOf = (
    request: TRequest,
    http: HttpRequest,
    response: ListenableResponse,
    decision: AdaptiveDecision,
  ): AdaptiveOutcome<THandler> => {
    if (decision.allowed) return admit(response, decision.permit as AdaptivePermit);
    // A dry run's refusal holds a permit: counted in flight, measured, and let through.
    if (decision.permit !== undefined) {
      notify(limit, { request, decision, dryRun: true });
      return admit(response, decision.permit, DRY_RUN_NEXT);
    }
    if (decision.reason === 'cancelled' && response.closed === true) return GONE;
    return refusal(limit, request, http, decision);
  };

  return {
    limiter,
    decideSync(request, http, response) {
      if (limit.skip !== undefined) return undefined;
      const decision = limiter.acquireSync(partitionOf(request), acquireOptions);
      return decision === undefined ? undefined : outcomeOf(request, http, response, decision);
    },
    async decide(request, http, response) {
      if (limit.skip !== undefined && (await skipOf(limit, request))) return NEXT;
      const partition = partitionOf(request);
      const now = limiter.acquireSync(partition, acquireOptions);
      if (now !== undefined) return outcomeOf(request, http, response, now);
      // It waits in the queue, and gives up the moment its client leaves.
      const controller = new AbortController();
      const stop = onResponseClose(response, () => controller.abort());
      const decision = await limiter.acquire(partition, { signal: controller.signal });
      stop();
      return outcomeOf(request, http, response, decision);
    },
  };
}

/**
 * Ties the permit's release to the response (see `releaseOnEnd`), telling the limiter how the
 * request ended; a client that left while its permit was asked for gets nothing.
 */
function admit<THandler>(
  response: ListenableResponse,
  permit: AdaptivePermit,
  next: AdaptiveOutcome<THandler> = NEXT,
): AdaptiveOutcome<THandler> {
  const ended = response as EndedResponse;
  const release = (): void => {
    if (ended.writableEnded === false) permit.release({ dropped: true });
    else if ((ended.statusCode ?? 200) >= 500) permit.release({ ignore: true });
    else permit.release();
  };
  return releaseOnEnd(response, { release }) ? next : GONE;
}

/** The reply to a request refused a permit. */
function refusal<TRequest, THandler>(
  limit: ResolvedAdaptiveLimit<TRequest, THandler>,
  request: TRequest,
  http: HttpRequest,
  decision: AdaptiveDecision,
): AdaptiveOutcome<THandler> {
  notify(limit, { request, decision, dryRun: false });
  const { status, fallback } = limit;
  const retryAfter = toSeconds(Math.max(1, decision.retryAfterMs));
  const headers: HeaderList = [['Retry-After', String(retryAfter)]];
  const accept = new RequestView(http).header('accept');
  if (fallback === undefined) return { kind: 'reply', headers, status, ...refusalBody(retryAfter, accept) };
  if ('handler' in fallback) {
    const rejection: HttpReply = { kind: 'reply', headers, status, ...refusalBody(retryAfter, accept) };
    return {
      kind: 'handler',
      headers,
      handler: fallback.handler,
      decision,
      rejection,
      reportError: (threw) => reportFailure(limit, request, 'fallback', { threw }),
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
function refusalBody(retryAfter: number, accept: string): { type: string; body: string } {
  const message = `The server is overloaded, retry in ${retryAfter} s.`;
  if (prefersJson(accept))
    return { type: JSON_TYPE, body: JSON.stringify({ error: 'overloaded', message, retryAfter }) };
  return { type: TEXT_TYPE, body: `${message}\n` };
}
