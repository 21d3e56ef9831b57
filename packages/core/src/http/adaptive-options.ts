import { createAdaptiveLimiter } from '../adaptive/create-adaptive-limiter';
import { ADAPTIVE_OPTION_NAMES } from '../adaptive/resolve-adaptive-options';
import type { AdaptiveDecision, AdaptiveLimiter, AdaptiveLimiterOptions } from '../adaptive/adaptive-types';
import { dryRunMetrics } from '../limiter/metrics-sink';
import { SluiceConfigError } from '../policy/config-error';
import type {
  CallbackErrorEvent,
  HeaderList,
  HttpHandlerOutcome,
  HttpReply,
  MaybePromise,
  StaticFallback,
} from './http-options';
import { boolean, optionalFunction, wholeNumberIn } from './option-values';
import { permitLimiterOf, type PermitLimiterKind, type ResolvedPermitLimit } from './permit-options';
import { resolveFallback } from './resolve-fallback';
import { limiterOptionsOf } from './resolve-http-options';

/** What {@link AdaptiveHttpOptions.onLimit} receives. */
export interface AdaptiveLimitEvent<TRequest> {
  /** The framework's request (Express `req`, Koa `ctx`, Fastify `request`). */
  readonly request: TRequest;
  /** The refusal. */
  readonly decision: AdaptiveDecision;
  /** `true` when `dryRun` let the request through anyway. */
  readonly dryRun: boolean;
}

/**
 * The HTTP options of `adaptiveLimit`.
 *
 * @typeParam TRequest - the framework's request
 * @typeParam THandler - the framework's fallback handler type (it receives an {@link AdaptiveDecision})
 */
export interface AdaptiveHttpOptions<TRequest, THandler extends (...args: never[]) => unknown> {
  /**
   * The partition of a request, a name of `shares` (any other name, or `undefined`, is the
   * partition `'*'`). Called at once, for every request: keep it cheap (a path prefix, a header).
   * @defaultValue every request in one partition
   */
  priority?: (request: TRequest) => string | undefined;
  /** A ready limiter from `createAdaptiveLimiter` instead of its options (`shares`, `min`, `max`, …): several routes can share it. */
  limiter?: AdaptiveLimiter;
  /** Status of a refusal. Whole number 400–599. @defaultValue 503 (the instance is overloaded, not the client over a quota) */
  status?: number;
  /** A reply instead of the refusal: static, or the framework's handler, which receives the decision. */
  fallback?: StaticFallback | THandler;
  /** Requests for which this returns `true` take no permit (health checks, the metrics route). */
  skip?: (request: TRequest) => MaybePromise<boolean>;
  /**
   * Try the limit out: every request is let through and counted in flight (so the limit still
   * follows latency); one that would have been refused is reported (`Sluice-Dry-Run: rejected`,
   * {@link AdaptiveHttpOptions.onLimit}, metrics with `dry_run="true"`), never refused or queued.
   * @defaultValue false
   */
  dryRun?: boolean;
  /** Called for each refused request (and each one `dryRun` let through that would have been). */
  onLimit?: (event: AdaptiveLimitEvent<TRequest>) => void;
  /** Called when your `priority`, `skip` or `fallback` function throws (as `rateLimit`'s). */
  onCallbackError?: (event: CallbackErrorEvent<TRequest>) => void;
}

/**
 * Options of `adaptiveLimit`: the HTTP options plus either `createAdaptiveLimiter` options
 * (`shares`, `algorithm`, `initial`, `min`, `max`, `queue`, `eventLoop`, `windowMs`, `name`,
 * `metrics`, `clock`) or a ready `limiter`.
 */
export type AdaptiveLimitOptions<
  TRequest,
  THandler extends (...args: never[]) => unknown,
> = AdaptiveHttpOptions<TRequest, THandler> &
  (
    | (AdaptiveLimiterOptions & { limiter?: undefined })
    | ({ limiter: AdaptiveLimiter } & { [K in keyof AdaptiveLimiterOptions]?: undefined })
  );

/** The HTTP options of `adaptiveLimit`; every other name is a `createAdaptiveLimiter` option. */
export const ADAPTIVE_HTTP_OPTION_NAMES = [
  'priority',
  'limiter',
  'status',
  'fallback',
  'skip',
  'dryRun',
  'onLimit',
  'onCallbackError',
] as const satisfies ReadonlyArray<keyof AdaptiveHttpOptions<unknown, () => void>>;

const HTTP_NAMES = new Set<string>(ADAPTIVE_HTTP_OPTION_NAMES);

/** How `adaptiveLimit` makes its limiter from the options, or checks a ready one. */
const ADAPTIVE_LIMITER: PermitLimiterKind<AdaptiveLimiter> = {
  create: (options) => createAdaptiveLimiter(options as AdaptiveLimiterOptions),
  factory: 'createAdaptiveLimiter',
  names: [...ADAPTIVE_OPTION_NAMES, ...ADAPTIVE_HTTP_OPTION_NAMES],
};

/** One adaptive limit, every option validated. */
export interface ResolvedAdaptiveLimit<TRequest, THandler> extends ResolvedPermitLimit<
  TRequest,
  THandler,
  AdaptiveLimitEvent<TRequest>
> {
  readonly limiter: AdaptiveLimiter;
  readonly priority: ((request: TRequest) => string | undefined) | undefined;
}

/**
 * Validates `adaptiveLimit`'s options once, at creation: the HTTP options here, every other
 * option handed to `createAdaptiveLimiter` (which names an unknown one).
 * @throws {@link SluiceConfigError} naming the first invalid or unknown option
 */
export function resolveAdaptiveLimit<TRequest, THandler extends (...args: never[]) => unknown>(
  options: AdaptiveLimitOptions<TRequest, THandler> = {},
): ResolvedAdaptiveLimit<TRequest, THandler> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SluiceConfigError(
      'options',
      options,
      'expected an object such as { shares: { checkout: 0.7, browse: 0.3 } }',
    );
  }
  const http = options as AdaptiveHttpOptions<TRequest, THandler>;
  const core = limiterOptionsOf(options, HTTP_NAMES);
  const dryRun = boolean('dryRun', http.dryRun);
  if (dryRun && core.metrics !== undefined) core.metrics = dryRunMetrics(core.metrics);
  return {
    limiter: permitLimiterOf(http.limiter, core, ADAPTIVE_LIMITER),
    priority: optionalFunction('priority', http.priority),
    skip: optionalFunction('skip', http.skip),
    status: wholeNumberIn('status', http.status, 503, 400, 599),
    fallback: resolveFallback<THandler>(http.fallback),
    dryRun,
    onLimit: optionalFunction('onLimit', http.onLimit),
    onCallbackError: optionalFunction('onCallbackError', http.onCallbackError),
  };
}

/** Call the user's fallback handler with the refusal; see `callFallback`. */
export type AdaptiveHandlerOutcome<THandler> = Omit<HttpHandlerOutcome<THandler>, 'decision'> & {
  readonly decision: AdaptiveDecision;
};

/**
 * What the adapter must do with a request:
 * - `next`: set `headers`, pass it on (its permit goes back when the response is ended or closes);
 * - `gone`: nothing: the client left while the request waited for a permit;
 * - `reply`: answer `status` with `body` of content type `type` after `headers`, and stop;
 * - `handler`: call the user's fallback handler with the decision through `callFallback`, and stop.
 */
export type AdaptiveOutcome<THandler> =
  | { readonly kind: 'next'; readonly headers: HeaderList }
  | { readonly kind: 'gone' }
  | HttpReply
  | AdaptiveHandlerOutcome<THandler>;
