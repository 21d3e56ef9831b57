import type { Limiter, LimiterOptions, LimiterRulesOptions } from '../limiter/create-limiter';
import type { OverrideRate, Overrides } from '../limiter/overrides';
import type { TrustProxy } from '../keys/trust-proxy';
import type { SluiceConfigError } from '../policy/config-error';
import type { Decision } from '../types';
import type { ClosableResponse } from './hold-request';

/**
 * Which responses count toward a limit (`countWhen`): `'failed'` — a status >= 400, or a
 * response that never finished (the client left, the handler threw); `'succeeded'` — the others;
 * or a function of the framework's request and response that returns `true` when it counts.
 * A request takes its units when it is admitted, as always; when its response does not count,
 * they are given back, exactly once, once the response is done.
 */
export type CountWhen<TRequest, TResponse> =
  'failed' | 'succeeded' | ((request: TRequest, response: TResponse) => boolean);

/** A value or a promise of it: option callbacks may be sync or async. */
export type MaybePromise<T> = T | PromiseLike<T>;

/**
 * Which rate-limit response headers are sent (IETF draft-ietf-httpapi-ratelimit-headers):
 *
 * - `'draft-8'` (default): `RateLimit-Policy: "6r/m";q=1;w=10` and `RateLimit: "6r/m";r=0;t=10`
 * - `'draft-7'`: `RateLimit-Policy: 1;w=10` and `RateLimit: limit=1, remaining=0, reset=10`
 * - `'draft-6'`: `RateLimit-Policy`, `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds)
 * - `'legacy'`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (epoch seconds)
 * - `false`: none (`Retry-After` is still sent on a rejection)
 *
 * `q` is the number of requests allowed at once (`decision.limit`) and `w` the seconds they take to
 * come back; `r` the requests left now, `t` the seconds until all are back.
 */
export type HeaderMode = 'draft-8' | 'draft-7' | 'draft-6' | 'legacy' | false;

/**
 * What a request whose key is empty gets (a missing header, query argument or cookie):
 * `'skip'` (default, as nginx does) is not limited; `'reject'` is refused with 400 Bad Request and
 * a `missing_key` body (whatever `status` says, no fallback, no `Retry-After`, nothing counted):
 * the client must send the header, argument or cookie, and a 429 would invite it to retry the same
 * request; `'shared'` is limited with every other keyless request, in one bucket.
 */
export type MissingKeyMode = 'skip' | 'reject' | 'shared';

/** A value `JSON.stringify` can write. */
export type JsonValue =
  string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue | undefined };

/**
 * A degraded reply sent instead of the rejection, e.g. cached content with a 200.
 *
 * @example
 * ```ts
 * const fallback: StaticFallback = { body: { items: [], note: 'busy, showing cached page' } };
 * ```
 */
export interface StaticFallback {
  /** @defaultValue 200 */
  readonly status?: number;
  /** Text is sent as is; anything else as JSON (serialized once, at creation). */
  readonly body: JsonValue;
  /**
   * Extra headers, set after the rate-limit headers and `Retry-After` (so they may override them).
   * Like every reply to a refused request, a static fallback carries `Retry-After` when the
   * decision has a wait to tell, whatever its status: a cached 200 still says when the live reply is back.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** Content-Type. @defaultValue `'text/plain; charset=utf-8'` for text, `'application/json; charset=utf-8'` otherwise */
  readonly type?: string;
}

/** What {@link HttpLimitOptions.onLimit} receives. */
export interface LimitEvent<TRequest> {
  /** The framework's request (Express `req`, Koa `ctx`, Fastify `request`). */
  readonly request: TRequest;
  /** The rejecting decision. */
  readonly decision: Decision;
  /** `true` when `dryRun` let the request through anyway. */
  readonly dryRun: boolean;
}

/** Which option's function failed: see {@link CallbackErrorEvent}. */
export type CallbackSource = 'key' | 'cost' | 'skip' | 'overrides' | 'fallback' | 'countWhen' | 'priority';

/**
 * What {@link HttpLimitOptions.onCallbackError} receives when one of your functions throws,
 * rejects or returns what it must not. The request never fails for it; instead:
 *
 * - `key`: the request has no key, and `onMissingKey` decides (`'skip'` by default: not limited);
 * - `cost`: the request is counted at the limiter's default cost (1 unless a ready `limiter` was
 *   created with another), never for free;
 * - `skip`: the request is not skipped (it is limited);
 * - `overrides`: the key is limited by the limit's own rate;
 * - `fallback`: the client gets the default rejection (`status`, `Retry-After`, a short body), or,
 *   when the handler had already begun its reply, the response is ended;
 * - `priority` (`adaptiveLimit`): the request is counted in the partition `'*'`.
 */
export interface CallbackErrorEvent<TRequest> {
  /** The framework's request (Express `req`, Koa `ctx`, Fastify `request`). */
  readonly request: TRequest;
  /** The option whose function failed. */
  readonly source: CallbackSource;
  /**
   * Names the option, what the function threw or returned (`cost NaN: …`, `key "Error: no
   * session": …`) and what sluice did instead; `cause` holds what was thrown.
   */
  readonly error: SluiceConfigError;
  /** The request's key, once known (`cost`, `fallback`). */
  readonly key?: string;
}

/**
 * The HTTP options every adapter shares; they are resolved by the HTTP layer, and every other
 * option goes to `createLimiter` untouched.
 *
 * @typeParam TRequest - the framework's request (Express `Request`, Koa `Context`, Fastify `FastifyRequest`)
 * @typeParam THandler - the framework's fallback handler type
 * @typeParam TResponse - what a `countWhen` function gets as the response (Express `Response`, Fastify `FastifyReply`, …)
 */
export interface HttpLimitOptions<
  TRequest,
  THandler extends (...args: never[]) => unknown,
  TResponse = unknown,
> {
  /**
   * The key: nginx variables (`$binary_remote_addr` `$remote_addr` `$http_<name>` `$arg_<name>`
   * `$cookie_<name>` `$server_name` `$uri` `$route`), composable (`'$http_user_id:$arg_sku_id'`),
   * constant text (one bucket for all), or a function (`undefined`, `null` or `''`: the key is
   * missing). `$arg_` is the value the framework's parsed query gives the app; `$uri` the
   * normalized path; `$route` the matched route pattern (see `compileKeyTemplate`). A key reading
   * the client address refuses a request whose connection is already gone. A variable given
   * several differing values (`?sku_id=B&sku_id=A`, `?sku_id=&sku_id=A`, a header on two lines, a
   * cookie twice) is refused with 400 and an `ambiguous_key` body, whatever `onMissingKey` says:
   * the app may read any of them, so no one bucket stands for the request (the same value twice is
   * that value; one header line is one value, commas and all).
   * @defaultValue `'$binary_remote_addr'`
   */
  key?: string | ((request: TRequest) => MaybePromise<string | undefined | null>);
  /**
   * Units a request takes: a whole number, or a function of the request. A request of cost 0
   * takes nothing but still needs a unit left: it is refused when a request of cost 1 would be,
   * and reported to `metrics` as any request (a limiter's `consume` at cost 0 only looks).
   * @defaultValue 1
   */
  cost?: number | ((request: TRequest) => MaybePromise<number>);
  /** A ready limiter instead of limiter options (`rate`, `store`, …). */
  limiter?: Limiter;
  /** Status of a rejection: 429, or 503 as nginx's `limit_req_status` defaults to. Whole number 400–599. @defaultValue 429 */
  status?: number;
  /** A degraded reply instead of the rejection: static, or the framework's handler, which receives the decision. */
  fallback?: StaticFallback | THandler;
  /** Rate-limit headers to send; `true` is `'draft-8'`. @defaultValue `'draft-8'` */
  headers?: HeaderMode | true;
  /** Requests for which this returns `true` are not limited (nor counted). */
  skip?: (request: TRequest) => MaybePromise<boolean>;
  /** @defaultValue `'skip'` */
  onMissingKey?: MissingKeyMode;
  /**
   * nginx `limit_req_dry_run`: requests are counted and reported (headers, a `Sluice-Dry-Run:
   * rejected` or `delayed` header, {@link HttpLimitOptions.onLimit}) but never rejected nor delayed.
   * @defaultValue false
   */
  dryRun?: boolean;
  /**
   * Which responses count toward the limit. A request takes its units when it is admitted, as
   * always (so at most `limit` requests that could count are ever in flight: the limit stays
   * exact under concurrency); once its response is done, when the response does not count, the
   * units it took are given back, exactly (each window in the window it counted in, the sliding
   * log's own entries) and once (through the store's batch on Redis).
   *
   * - `'failed'`: responses with a status >= 400 count, and so do responses that never finished
   *   (the client left, the handler threw): five failed logins per 15 minutes, successes free;
   * - `'succeeded'`: the others count;
   * - a function `(request, response) => boolean`, called once the response is done: `true`
   *   counts. `response` is the framework's (Express `res`, Koa `ctx`, Fastify `reply`, Hono `c`,
   *   a Fetch handler's `Response` or `undefined` when it threw; see each adapter). One that
   *   throws counts, reported to `onCallbackError` (source `'countWhen'`).
   *
   * A refused request took nothing and gives nothing back; so does a dry-run request over the
   * limit. A held request whose client leaves gives its turn back once, whatever this says.
   * The limiter's `metrics` count each give-back (`refunded`). Needs a store that gives back
   * exactly: MemoryStore and RedisStore do.
   * @defaultValue every admitted request counts
   * @example
   * ```ts
   * app.post('/login', rateLimit({ key: '$remote_addr', rate: '5/15m', countWhen: 'failed' }), login);
   * ```
   */
  countWhen?: CountWhen<TRequest, TResponse>;
  /** Which proxies may set the client address through `X-Forwarded-For`. @defaultValue false (none) */
  trustProxy?: TrustProxy;
  /** Prefix length by which IPv6 clients are grouped. @defaultValue 64 */
  ipv6Subnet?: number;
  /** Called for each rejected request (and each one `dryRun` let through that would have been). */
  onLimit?: (event: LimitEvent<TRequest>) => void;
  /**
   * Called when your `key`, `cost`, `skip` or `fallback` function throws or returns an invalid
   * value; the request goes on as {@link CallbackErrorEvent} says. A listener that throws is ignored.
   */
  onCallbackError?: (event: CallbackErrorEvent<TRequest>) => void;
  /** The policy name in draft-8 headers (printable ASCII). @defaultValue the rate as written, e.g. `'6r/m'` */
  policyName?: string;
  /**
   * At most this many requests are held at once by this limit (admitted with a delay: the leaky
   * bucket without `nodelay`, a `queue`, `warmup`), over all keys. A request beyond it is refused
   * as the limit refuses (`status`, `Retry-After` when its turn would have come, `fallback`), and
   * its turn is given back: the refusal costs no unit. Each held request keeps its request and
   * response alive (a few kB), so this bounds the memory a flood of held requests can take.
   *
   * Per limit, not per process: one busy route cannot refuse the delays of another, and the
   * process holds at most `maxHeld` times the number of limits. A whole number >= 0 (0 refuses
   * every delayed request), or `Infinity` for no bound.
   * @defaultValue 1000
   */
  maxHeld?: number;
}

/**
 * Per-key limits on a route: `createLimiter`'s `overrides` (an object or `Map` from key to rate,
 * or a function), where a function receives the framework's request as its second argument
 * (Express `req`, Koa `ctx`, Fastify `request`), so a tier read from the request can pick the rate.
 * A function that throws leaves the key on the limit's own rate and is reported to
 * `onCallbackError` (source `'overrides'`). Where no request is at hand (`limiter.reset(key)`, and
 * the look-ahead of several limits on one route, which then predicts with the limit's own rate),
 * the function is not called.
 *
 * @example
 * ```ts
 * app.use(rateLimit({ rate: '10r/s', overrides: (key, req) => (req.headers['x-tier'] === 'gold' ? '100r/s' : undefined) }));
 * ```
 */
export type HttpOverrides<TRequest> =
  | Exclude<Overrides, (...args: never[]) => unknown>
  | ((key: string, request: TRequest) => OverrideRate | null | undefined);

/**
 * Every `createLimiter` option but `cost` (which the HTTP layer widens to a function) and
 * `overrides` (whose function receives the request: see {@link HttpOverrides}).
 */
export type LimiterOnlyOptions = Omit<LimiterOptions, 'cost' | 'overrides'>;

/** `createLimiter`'s options with `rules` (several limits, each with its own algorithm), as {@link LimiterOnlyOptions}. */
export type LimiterRulesOnlyOptions = Omit<LimiterRulesOptions, 'cost' | 'overrides'>;

/** Every `createLimiter` option name, `rules` included: none may accompany a ready `limiter`. */
export type LimiterOptionName = keyof LimiterOnlyOptions | 'overrides';

/**
 * Options of one limit on a route: HTTP options plus either `createLimiter` options (`rate`,
 * `burst`, `store`, …, any the core accepts; or `rules` instead of `rate` for several limits with
 * their own algorithms) or a ready `limiter`.
 *
 * @example
 * ```ts
 * const options: RateLimitOptions<Request, ExpressFallback> = {
 *   rules: [{ rate: '10r/s' }, { algorithm: 'fixed-window', rate: '1000/1h' }],
 * };
 * ```
 */
export type RateLimitOptions<
  TRequest,
  THandler extends (...args: never[]) => unknown,
  TResponse = unknown,
> = HttpLimitOptions<TRequest, THandler, TResponse> &
  (
    | (LimiterOnlyOptions & { limiter?: undefined; overrides?: HttpOverrides<TRequest> })
    | (LimiterRulesOnlyOptions & { limiter?: undefined; overrides?: HttpOverrides<TRequest> })
    | ({ limiter: Limiter } & { [K in LimiterOptionName]?: undefined })
  );

/** Response headers as `[name, value]` pairs, in the order to set them. */
export type HeaderList = ReadonlyArray<readonly [name: string, value: string]>;

/** A reply for the adapter to send: `status`, `body` of content type `type`, after `headers`. */
export interface HttpReply {
  readonly kind: 'reply';
  readonly headers: HeaderList;
  readonly status: number;
  readonly type: string;
  readonly body: string;
}

/** Call the user's fallback handler with the decision; see `callFallback`. */
export interface HttpHandlerOutcome<THandler> {
  readonly kind: 'handler';
  readonly headers: HeaderList;
  readonly handler: THandler;
  readonly decision: Decision;
  /** The default rejection, sent instead when the handler throws or rejects before replying. */
  readonly rejection: HttpReply;
  /** Reports what the handler threw to `onCallbackError` (source `'fallback'`). */
  readonly reportError: (error: unknown) => void;
}

/**
 * What the adapter must do with a request: set `headers` in every case, then
 * - `next`: pass it on;
 * - `delay`: call `hold(response)`, which holds it `delayMs` and tells whether to pass it on
 *   (`false`: the client left, and its turn went back to the limits that delayed it). A delay
 *   outcome takes a `maxHeld` slot of each limit that delayed it until `hold` ends, or until
 *   `cancel` when the adapter does not hold it after all: each must end with one or the other;
 * - `reply`: answer `status` with `body` of content type `type`, and stop;
 * - `handler`: call the user's fallback `handler` with the decision through `callFallback`, and stop.
 */
export type HttpOutcome<THandler> =
  | { readonly kind: 'next'; readonly headers: HeaderList }
  | {
      readonly kind: 'delay';
      readonly headers: HeaderList;
      readonly delayMs: number;
      /**
       * Holds the request `delayMs` with `holdRequest` (its client's connection watched),
       * then frees its `maxHeld` slot. Resolves `true` to pass it on; `false` when the client left,
       * after giving its turn back.
       */
      readonly hold: (response: ClosableResponse) => Promise<boolean>;
      /** Gives the request's turn back (`limiter.cancel`) to every limit that delayed it, and frees its slot. */
      readonly cancel: () => void;
    }
  | HttpReply
  | HttpHandlerOutcome<THandler>;
