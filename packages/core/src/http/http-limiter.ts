import { RequestView, type HttpRequest } from '../keys/http-request';
import { takeAllSync } from '../limiter/consume-all';
import type { ConsumeOptions, Limiter } from '../limiter/create-limiter';
import { KeyedGiveBack } from '../limiter/in-process-give-back';
import { SluiceConfigError } from '../policy/config-error';
import type { Decision } from '../types';
import { MISSING_KEY_STATUS } from './common-outcomes';
import {
  CountWatch,
  refundUncounted,
  type CountedResponse,
  type Counts,
  type OnceRefund,
} from './count-when';
import { decideAll, type Entry } from './decide-all';
import { watchClose } from './response-close';
import type { HttpOutcome, RateLimitOptions } from './http-options';
import { outcomeOf, rejectionStatus } from './limit-outcome';
import { rejectionBody } from './reply-body';
import { ReplyCache } from './reply-cache';
import { resolveHttpLimit, type ResolvedLimit } from './resolve-http-options';
import { costOf, keyOf, notify, skipOf, templateKeyOf } from './user-callbacks';

/**
 * One or several limits on a route, resolved once; adapters call {@link HttpLimiter.decide} per request.
 */
export interface HttpLimiter<TRequest, THandler> {
  /** The limiters, in the order the limits were given (for `reset`, `peek`, tests). */
  readonly limiters: readonly Limiter[];
  /**
   * Decides what happens to a request: keys, cost, consumption, headers, status, body.
   * Rejects only when the store fails (and `onStoreError` cannot decide) or the limiter's `clock`
   * breaks; a `key`, `cost` or `skip` function that throws goes to `onCallbackError` instead.
   *
   * @param request - the framework's request, handed to `key`, `cost`, `skip` functions and events
   * @param http - the same request in the neutral shape
   * @param raw - Node's response (or a `FetchExchange`), watched for `countWhen`: without it, an
   *   admitted request's units stay taken whatever its response
   * @param response - the framework's response, handed to a `countWhen` function (default: `raw`)
   */
  decide(
    request: TRequest,
    http: HttpRequest,
    raw?: CountedResponse,
    response?: unknown,
  ): Promise<HttpOutcome<THandler>>;
  /**
   * The same outcome without a promise, when it can be had synchronously: one limit keyed by
   * nginx variables, with a fixed cost, no `skip`, and an in-process store. `undefined`
   * otherwise (nothing was called or consumed): use {@link HttpLimiter.decide}. Adapters try it
   * first, so the common in-memory case costs no promise per request.
   */
  decideSync(
    request: TRequest,
    http: HttpRequest,
    raw?: CountedResponse,
    response?: unknown,
  ): HttpOutcome<THandler> | undefined;
  /** Whether a limit has `countWhen`: a Fetch adapter then hands over a `FetchExchange` as `raw`, ended with the handler's `Response`. */
  readonly countsResponses: boolean;
}

/**
 * Builds the framework-neutral limiter behind every adapter from one limit's options, or from an
 * array of them: several limits on one route (say per IP, then per SKU), applied in order.
 *
 * **What several limits guarantee.** Every limit's key is resolved first, then the limits are
 * decided together by core's `consumeAll`: every limit takes the request's cost, or none does,
 * however many requests race — a rejection by one limit uses no unit of another (a dry-run limit
 * is counted with the others, never refuses). In-process stores decide all limits in one
 * synchronous step; limits on one Redis node (standalone, Sentinel, or on Cluster keys with the
 * same hash tag) in one script call. Elsewhere (Cluster keys in different slots, limits on
 * different stores, `lease`, a store that failed) the limits are taken in order and, when one
 * refuses, the earlier ones get back exactly what they took: meanwhile a concurrent request may
 * find those units taken, and a refund the store fails (down, slower than `timeoutMs`) is lost
 * (reported as `storeError`). A single limit is one store call per request.
 *
 * The reply reports the most restrictive decision: the rejecting one, else the one with the
 * fewest requests left (on a tie, the longest reset). A delay is the longest any limit asks.
 *
 * @param options - one limit's options, or several limits' options in order
 * @throws {@link SluiceConfigError} naming the first invalid option
 * @example
 * ```ts
 * const limits = createHttpLimiter([
 *   { key: '$binary_remote_addr', rate: '10r/s', burst: 20 },
 *   { key: '$arg_sku_id', rate: '6r/m', fallback: { body: { soldOut: false, cached: true } } },
 * ]);
 * const outcome = await limits.decide(req, { remoteAddress: req.socket.remoteAddress, url: req.url, headers: req.headers });
 * ```
 */
export function createHttpLimiter<
  TRequest,
  THandler extends (...args: never[]) => unknown,
  TResponse = unknown,
>(
  options:
    | RateLimitOptions<TRequest, THandler, TResponse>
    | ReadonlyArray<RateLimitOptions<TRequest, THandler, TResponse>>,
): HttpLimiter<TRequest, THandler> {
  const list = Array.isArray(options)
    ? options
    : [options as RateLimitOptions<TRequest, THandler, TResponse>];
  if (list.length === 0)
    throw new SluiceConfigError('options', options, 'expected limit options, or a non-empty array of them');
  const limits = list.map((item: RateLimitOptions<TRequest, THandler, TResponse>) => resolveHttpLimit(item));
  const replies = limits.map((limit) => new ReplyCache(limit.headers, limit.policyName, limit.now));
  // Decided once: whether a request can be decided without calling user code or awaiting.
  const only = limits.length === 1 ? (limits[0] as ResolvedLimit<TRequest, THandler>) : undefined;
  // A cost of 0 is a probe (see `decideAll`), which the fast paths do not take.
  const fastLimit =
    only !== undefined &&
    only.template !== undefined &&
    only.skip === undefined &&
    typeof only.cost !== 'function' &&
    only.cost !== 0
      ? only
      : undefined;
  // `countWhen` takes its units with a receipt, to give back exactly: in process, its own fast path.
  const syncLimit = fastLimit?.countWhen === undefined ? fastLimit : undefined;
  const counted =
    fastLimit?.countWhen !== undefined && fastLimit.limiter.store.consumeSync !== undefined
      ? fastLimit
      : undefined;
  const syncCount = counted?.countWhen;
  // A bucket limit without overrides gives back from the key alone: nothing kept but the key.
  const keyed = counted === undefined ? undefined : KeyedGiveBack.of(counted.limiter);
  const syncReplies = replies[0] as ReplyCache;
  const syncCost = fastLimit?.cost as number | undefined;
  // Built once: the fast path allocates no options object per request.
  const fixedOptions: ConsumeOptions | undefined = syncCost === undefined ? undefined : { cost: syncCost };
  // With the request as context: one object whose `context` is set around each call (consumeSync
  // has read it when it returns).
  const withRequest: { cost: number | undefined; context: unknown } | undefined =
    fastLimit?.passRequest === true ? { cost: syncCost, context: undefined } : undefined;

  // A limit on a remote store (Redis) decides by a store call: `decideSync` has nothing to give,
  // and `decide` takes its key and cost as `decideSync` does, without the general path's awaits.
  const remote = syncLimit?.limiter.store.consumeSync === undefined ? syncLimit : undefined;
  const local = remote === undefined ? syncLimit : undefined;

  /** The outcome of the one limit's decision (see `decideSync`). */
  const outcomeOfOne = (
    limit: ResolvedLimit<TRequest, THandler>,
    request: TRequest,
    view: RequestView,
    key: string,
    decision: Decision,
    refund?: OnceRefund,
  ): HttpOutcome<THandler> => {
    // The two answers of nearly every request, each shared while it repeats.
    if (decision.allowed && decision.delayMs === 0) return syncReplies.next(decision);
    if (!decision.allowed && !limit.dryRun && limit.fallback === undefined) {
      notify(limit, { request, decision, dryRun: false });
      return syncReplies.rejection(
        decision,
        syncReplies.headers(decision),
        rejectionStatus(limit, decision),
        view.header('accept'),
      );
    }
    const entry = { limit, replies: syncReplies, key, cost: syncCost };
    return outcomeOf(request, view, [{ entry, decision, refund }], false);
  };

  /**
   * The outcome of an admission by the `countWhen` limit, its response watched when it runs (see
   * {@link CountWatch}): one object per request; a refund function only for a held request.
   */
  const watched = (
    request: TRequest,
    view: RequestView,
    key: string,
    decision: Decision,
    raw: CountedResponse | undefined,
    response: unknown,
    refund: (() => Promise<unknown>) | undefined,
  ): HttpOutcome<THandler> => {
    const limit = counted as ResolvedLimit<TRequest, THandler>;
    const watch = new CountWatch(
      raw,
      request,
      response,
      syncCount as Counts,
      limit.limiter,
      refund,
      keyed,
      key,
      syncCost,
      limit.passRequest,
    );
    const outcome =
      decision.allowed && decision.delayMs === 0
        ? syncReplies.next(decision)
        : outcomeOfOne(limit, request, view, key, decision, () => watch.giveBack());
    if (raw !== undefined && (outcome.kind === 'next' || outcome.kind === 'delay')) watchClose(raw, watch);
    return outcome;
  };

  /** {@link watched} for a limit that gives back from the key alone (see {@link KeyedGiveBack}). */
  const decideKeyed = (
    request: TRequest,
    view: RequestView,
    key: string,
    raw: CountedResponse | undefined,
    response: unknown,
  ): HttpOutcome<THandler> | undefined => {
    const limit = counted as ResolvedLimit<TRequest, THandler>;
    const by = keyed as KeyedGiveBack;
    let decision: Decision | undefined;
    if (withRequest === undefined) {
      decision = by.take(key, fixedOptions);
    } else {
      withRequest.context = request;
      try {
        decision = by.take(key, withRequest);
      } finally {
        withRequest.context = undefined;
      }
    }
    if (decision === undefined) return undefined;
    if (!by.took(decision, syncCost)) return outcomeOfOne(limit, request, view, key, decision);
    return watched(request, view, key, decision, raw, response, undefined);
  };

  return {
    limiters: limits.map((limit) => limit.limiter),
    countsResponses: limits.some((limit) => limit.countWhen !== undefined),
    decideSync(request, http, raw, response) {
      if (counted !== undefined) {
        // One in-process limit with `countWhen`: taken, with what gives it back, in one synchronous step.
        const view = new RequestView(http);
        const key = templateKeyOf(counted, http, view);
        if (key === undefined) return undefined;
        if (keyed !== undefined) return decideKeyed(request, view, key, raw, response);
        const context = counted.passRequest ? request : undefined;
        const taken = takeAllSync([{ limiter: counted.limiter, key, cost: syncCost, context }]);
        if (taken === undefined) return undefined;
        const given = taken.refunds[0];
        const decision = taken.decisions[0] as Decision;
        if (given === undefined) return outcomeOfOne(counted, request, view, key, decision);
        return watched(request, view, key, decision, raw, response, given);
      }
      if (local === undefined) return undefined;
      const view = new RequestView(http);
      const key = templateKeyOf(local, http, view);
      if (key === undefined) return undefined;
      let decision: Decision | undefined;
      if (withRequest === undefined) {
        decision = local.limiter.consumeSync(key, fixedOptions);
      } else {
        withRequest.context = request;
        try {
          decision = local.limiter.consumeSync(key, withRequest);
        } finally {
          // A finished request must not stay reachable from the limit.
          withRequest.context = undefined;
        }
      }
      // Not decided in process after all (a limiter whose store says otherwise): decide() instead.
      if (decision === undefined) return undefined;
      return outcomeOfOne(local, request, view, key, decision);
    },
    decide(request, http, raw, response) {
      if (remote === undefined) return decideAny(request, http, raw, response);
      const view = new RequestView(http);
      const key = templateKeyOf(remote, http, view);
      if (key === undefined) return decideAny(request, http, raw, response);
      let decided: Promise<Decision>;
      try {
        // Its own options object with the request (a limiter passed in may read it later).
        decided = remote.limiter.consume(
          key,
          withRequest === undefined ? fixedOptions : { cost: syncCost, context: request },
        );
      } catch (error) {
        // A broken clock: a rejection, as from the general path.
        return Promise.reject(error);
      }
      return decided.then((decision) => outcomeOfOne(remote, request, view, key, decision));
    },
  };

  async function decideAny(
    request: TRequest,
    http: HttpRequest,
    raw: CountedResponse | undefined,
    response: unknown,
  ): Promise<HttpOutcome<THandler>> {
    const view = new RequestView(http);
    const entries: Array<Entry<TRequest, THandler>> = [];
    let dryRunMissingKey = false;
    for (let i = 0; i < limits.length; i++) {
      const limit = limits[i] as ResolvedLimit<TRequest, THandler>;
      if (limit.skip !== undefined && (await skipOf(limit, request))) continue;
      // The connection is gone, so the client's address is unknown: keyed by it, the request
      // would have the empty key and pass (or share one bucket). Refused, whatever onMissingKey says.
      const gone = http.remoteAddress === undefined && limit.readsAddress;
      view.several = false;
      const key = gone ? '' : await keyOf(limit, request, view);
      // A variable given several differing values (`?sku_id=B&sku_id=A`): the app may read any of
      // them, so no one bucket stands for the request. Refused, whatever onMissingKey says.
      const several = view.several;
      const missing = gone || several ? 'reject' : key === '' ? limit.onMissingKey : undefined;
      if (missing === 'skip') continue;
      if (missing === 'reject') {
        if (limit.dryRun) {
          dryRunMissingKey = true;
          continue;
        }
        // Refused before any limit consumed anything. A missing or ambiguous key is the client's
        // error (400, not `status`): the request lacks what the limit keys on, and sending it
        // again unchanged cannot help. A client that is gone gets the limit's own refusal (no one
        // reads it; a log does).
        const { type, body } = rejectionBody(undefined, view.header('accept'), several);
        const status = gone ? limit.status : MISSING_KEY_STATUS;
        return { kind: 'reply', headers: [], status, type, body };
      }
      entries.push({
        limit,
        replies: replies[i] as ReplyCache,
        key,
        cost: await costOf(limit, request, key),
      });
    }
    const results = await decideAll(entries, request);
    const outcome = outcomeOf(request, view, results, dryRunMissingKey);
    if (outcome.kind === 'next' || outcome.kind === 'delay') {
      for (const { entry, decision, refund } of results) {
        const counts = entry.limit.countWhen;
        if (counts !== undefined && refund !== undefined && decision.allowed)
          refundUncounted(raw, request, response, counts, refund as OnceRefund, entry.limit.limiter);
      }
    }
    return outcome;
  }
}
