import type { RequestView } from '../keys/http-request';
import type { TrustProxy } from '../keys/trust-proxy';
import { createConcurrencyLimiter } from '../concurrency/create-concurrency-limiter';
import type {
  ConcurrencyDecision,
  ConcurrencyLimiter,
  ConcurrencyLimiterOptions,
} from '../concurrency/concurrency-types';
import { CONCURRENCY_OPTION_NAMES } from '../concurrency/resolve-concurrency-options';
import { dryRunMetrics } from '../limiter/metrics-sink';
import { SluiceConfigError } from '../policy/config-error';
import type {
  CallbackErrorEvent,
  HeaderList,
  HttpHandlerOutcome,
  HttpReply,
  MaybePromise,
  MissingKeyMode,
  StaticFallback,
} from './http-options';
import { boolean, oneOf, optionalFunction } from './option-values';
import { permitLimiterOf, type PermitLimiterKind, type ResolvedPermitLimit } from './permit-options';
import { limiterOptionsOf, MISSING_KEY_MODES, resolveSharedHttpOptions } from './resolve-http-options';

/** What {@link ConcurrencyHttpOptions.onLimit} receives. */
export interface ConcurrencyLimitEvent<TRequest> {
  /** The framework's request (Express `req`, Koa `ctx`, Fastify `request`). */
  readonly request: TRequest;
  /** The refusal. */
  readonly decision: ConcurrencyDecision;
  /** `true` when `dryRun` let the request through anyway. */
  readonly dryRun: boolean;
}

/**
 * The HTTP options of `concurrencyLimit`, the same as `rateLimit`'s where they mean the same.
 *
 * @typeParam TRequest - the framework's request
 * @typeParam THandler - the framework's fallback handler type (it receives a {@link ConcurrencyDecision})
 */
export interface ConcurrencyHttpOptions<TRequest, THandler extends (...args: never[]) => unknown> {
  /** The key, as `rateLimit`'s (nginx variables or a function). @defaultValue `'$binary_remote_addr'` (nginx's `limit_conn_zone $binary_remote_addr`) */
  key?: string | ((request: TRequest) => MaybePromise<string | undefined | null>);
  /** A ready limiter from `createConcurrencyLimiter` instead of its options (`max`, `store`, …). */
  limiter?: ConcurrencyLimiter;
  /** Status of a refusal: 429, or 503 as nginx's `limit_conn_status` defaults to. Whole number 400–599. @defaultValue 429 */
  status?: number;
  /** A reply instead of the refusal: static, or the framework's handler, which receives the decision. */
  fallback?: StaticFallback | THandler;
  /** Requests for which this returns `true` take no permit. */
  skip?: (request: TRequest) => MaybePromise<boolean>;
  /** A request without a key: `'skip'` (no permit, as nginx), `'reject'`, or `'shared'` (one key for all). @defaultValue `'skip'` */
  onMissingKey?: MissingKeyMode;
  /**
   * nginx `limit_conn_dry_run`: a request over the limit is let through without a permit,
   * reported (`Sluice-Dry-Run: rejected`, {@link ConcurrencyHttpOptions.onLimit}), never refused.
   * @defaultValue false
   */
  dryRun?: boolean;
  /** Which proxies may set the client address through `X-Forwarded-For`. @defaultValue false (none) */
  trustProxy?: TrustProxy;
  /** Prefix length by which IPv6 clients are grouped. @defaultValue 64 */
  ipv6Subnet?: number;
  /** Called for each refused request (and each one `dryRun` let through that would have been). */
  onLimit?: (event: ConcurrencyLimitEvent<TRequest>) => void;
  /** Called when your `key`, `skip` or `fallback` function throws or returns an invalid value (as `rateLimit`'s). */
  onCallbackError?: (event: CallbackErrorEvent<TRequest>) => void;
}

/**
 * Options of `concurrencyLimit`: the HTTP options plus either `createConcurrencyLimiter` options
 * (`max`, `store`, `prefix`, `name`, `metrics`, `leaseMs`, `queue`, `onStoreError`, `timeoutMs`) or a
 * ready `limiter`.
 */
export type ConcurrencyLimitOptions<
  TRequest,
  THandler extends (...args: never[]) => unknown,
> = ConcurrencyHttpOptions<TRequest, THandler> &
  (
    | (ConcurrencyLimiterOptions & { limiter?: undefined })
    | ({ limiter: ConcurrencyLimiter } & { [K in keyof ConcurrencyLimiterOptions]?: undefined })
  );

/** The HTTP options of `concurrencyLimit`; every other name is a `createConcurrencyLimiter` option. */
export const CONCURRENCY_HTTP_OPTION_NAMES = [
  'key',
  'limiter',
  'status',
  'fallback',
  'skip',
  'onMissingKey',
  'dryRun',
  'trustProxy',
  'ipv6Subnet',
  'onLimit',
  'onCallbackError',
] as const satisfies ReadonlyArray<keyof ConcurrencyHttpOptions<unknown, () => void>>;

const HTTP_NAMES = new Set<string>(CONCURRENCY_HTTP_OPTION_NAMES);

/** How `concurrencyLimit` makes its limiter from the options, or checks a ready one. */
const CONCURRENCY_LIMITER: PermitLimiterKind<ConcurrencyLimiter> = {
  create: (options) => createConcurrencyLimiter(options as unknown as ConcurrencyLimiterOptions),
  factory: 'createConcurrencyLimiter',
  names: [...CONCURRENCY_OPTION_NAMES, ...CONCURRENCY_HTTP_OPTION_NAMES],
};

/** One concurrency limit, every option validated and compiled. */
export interface ResolvedConcurrencyLimit<TRequest, THandler> extends ResolvedPermitLimit<
  TRequest,
  THandler,
  ConcurrencyLimitEvent<TRequest>
> {
  readonly limiter: ConcurrencyLimiter;
  readonly key: (request: TRequest, view: RequestView) => MaybePromise<unknown>;
  readonly template: ((view: RequestView) => string) | undefined;
  /** Whether the key template reads the client address: a request whose connection is gone is then refused. */
  readonly readsAddress: boolean;
  readonly onMissingKey: MissingKeyMode;
}

/**
 * Validates `concurrencyLimit`'s options once, at creation: the HTTP options here, every other
 * option handed to `createConcurrencyLimiter` (which names an unknown one).
 * @throws {@link SluiceConfigError} naming the first invalid or unknown option
 */
export function resolveConcurrencyLimit<TRequest, THandler extends (...args: never[]) => unknown>(
  options: ConcurrencyLimitOptions<TRequest, THandler>,
): ResolvedConcurrencyLimit<TRequest, THandler> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SluiceConfigError('options', options, 'expected an object such as { max: 10 }');
  }
  const http = options as ConcurrencyHttpOptions<TRequest, THandler>;
  const core = limiterOptionsOf(options, HTTP_NAMES);
  const dryRun = boolean('dryRun', http.dryRun);
  // As rateLimit's: refusals dryRun lets through are counted with dry_run="true".
  if (dryRun && core.metrics !== undefined) core.metrics = dryRunMetrics(core.metrics);
  const limiter = permitLimiterOf(http.limiter, core, CONCURRENCY_LIMITER);
  if (dryRun && limiter.queued) {
    throw new SluiceConfigError(
      'dryRun',
      dryRun,
      'cannot be combined with a queue: a dry run lets a request over the limit through at once, and a queue holds it (try the limit out without its queue)',
    );
  }
  return {
    limiter,
    ...resolveSharedHttpOptions<TRequest, THandler>(http),
    onMissingKey: oneOf('onMissingKey', http.onMissingKey, MISSING_KEY_MODES, 'skip'),
    dryRun,
    onLimit: optionalFunction('onLimit', http.onLimit),
    onCallbackError: optionalFunction('onCallbackError', http.onCallbackError),
  };
}

/** Call the user's fallback handler with the refusal; see `callFallback`. */
export type ConcurrencyHandlerOutcome<THandler> = Omit<HttpHandlerOutcome<THandler>, 'decision'> & {
  readonly decision: ConcurrencyDecision;
};

/**
 * What the adapter must do with a request:
 * - `next`: set `headers`, pass it on (its permit, if it took one, goes back when the response is ended or closes);
 * - `gone`: nothing: the client left while the request waited for a permit;
 * - `reply`: answer `status` with `body` of content type `type` after `headers`, and stop;
 * - `handler`: call the user's fallback handler with the decision through `callFallback`, and stop.
 */
export type ConcurrencyOutcome<THandler> =
  | { readonly kind: 'next'; readonly headers: HeaderList }
  | { readonly kind: 'gone' }
  | HttpReply
  | ConcurrencyHandlerOutcome<THandler>;
