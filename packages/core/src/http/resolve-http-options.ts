import { compileKeyTemplate, readsClientAddress } from '../keys/key-template';
import { resolveIpv6Subnet } from '../keys/client-address';
import type { RequestView } from '../keys/http-request';
import { compileTrustProxy } from '../keys/trust-proxy';
import { createLimiter, type Limiter, type LimiterOptions } from '../limiter/create-limiter';
import { dryRunMetrics } from '../limiter/metrics-sink';
import { SluiceConfigError } from '../policy/config-error';
import { MAX_LIMIT } from '../policy/rate';
import { resolveCountWhen, type Counts } from './count-when';
import { HoldSlots, resolveMaxHeld } from './delay-outcome';
import type {
  CallbackErrorEvent,
  HeaderMode,
  HttpLimitOptions,
  LimitEvent,
  MissingKeyMode,
  RateLimitOptions,
} from './http-options';
import { boolean, oneOf, optionalFunction, wholeNumberIn } from './option-values';
import { resolveFallback, type ResolvedFallback } from './resolve-fallback';

export type { ResolvedStaticFallback } from './resolve-fallback';
import { requestOverrides, type UserCallbacks } from './user-callbacks';

/** The HTTP options; every other name is a `createLimiter` option. */
export const HTTP_OPTION_NAMES = [
  'key',
  'cost',
  'limiter',
  'status',
  'fallback',
  'headers',
  'skip',
  'onMissingKey',
  'dryRun',
  'trustProxy',
  'ipv6Subnet',
  'onLimit',
  'onCallbackError',
  'policyName',
  'maxHeld',
  'countWhen',
] as const satisfies ReadonlyArray<keyof HttpLimitOptions<unknown, () => void>>;

const HTTP_OPTIONS = new Set<string>(HTTP_OPTION_NAMES);
const HEADER_MODES = ['draft-8', 'draft-7', 'draft-6', 'legacy'] as const;
/** The values of `onMissingKey`, for `rateLimit` and `concurrencyLimit` alike. */
export const MISSING_KEY_MODES = ['skip', 'reject', 'shared'] as const;

/** One limit with every option validated and compiled, ready for requests. */
export interface ResolvedLimit<TRequest, THandler> extends UserCallbacks<TRequest> {
  readonly limiter: Limiter;
  /** The key template, compiled, when `key` is nginx variables (not a function): synchronous. */
  readonly template: ((view: RequestView) => string) | undefined;
  /** Whether the key template reads the client address: a request whose connection is gone is then refused. */
  readonly readsAddress: boolean;
  readonly status: number;
  readonly fallback: ResolvedFallback<THandler>;
  readonly headers: HeaderMode;
  readonly onMissingKey: MissingKeyMode;
  readonly dryRun: boolean;
  readonly onLimit: ((event: LimitEvent<TRequest>) => void) | undefined;
  readonly policyName: string | undefined;
  /** Epoch ms for absolute header times: the limiter options' `clock`, else `Date.now`. */
  readonly now: () => number;
  /**
   * Whether `consume` gets the request as `context`: for an `overrides` function, and for a ready
   * `limiter` (whose options are unknown). Otherwise nothing is built per request for it.
   */
  readonly passRequest: boolean;
  /** This limit's held requests, at most `maxHeld`: one count per resolved limit (per middleware or route). */
  readonly held: HoldSlots;
  /** `countWhen`, resolved: whether a done response counts; `undefined` when every admitted request counts. */
  readonly countWhen: Counts | undefined;
}

/**
 * Validates one limit's options once, at creation: resolves the HTTP options and hands every
 * other option, untouched, to `createLimiter` (so limiter options added later need no change here).
 *
 * @param options - the options as the user gave them
 * @returns the resolved limit
 * @throws {@link SluiceConfigError} naming the first invalid or unknown option
 * @example
 * ```ts
 * const limit = resolveHttpLimit({ rate: '6r/m', key: '$arg_sku_id', status: 503 });
 * ```
 */
export function resolveHttpLimit<
  TRequest,
  THandler extends (...args: never[]) => unknown,
  TResponse = unknown,
>(options: RateLimitOptions<TRequest, THandler, TResponse>): ResolvedLimit<TRequest, THandler> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SluiceConfigError('options', options, 'expected an object such as { rate: "10r/s" }');
  }
  const http = options as HttpLimitOptions<TRequest, THandler>;
  const limiterOptions = limiterOptionsOf(options, HTTP_OPTIONS);
  const cost = http.cost;
  if (cost !== undefined && typeof cost !== 'function') {
    if (typeof cost !== 'number' || !Number.isInteger(cost) || cost < 0 || cost > MAX_LIMIT) {
      throw new SluiceConfigError(
        'cost',
        cost,
        `must be a whole number from 0 to ${MAX_LIMIT}, or (request) => number`,
      );
    }
  }
  const onCallbackError = optionalFunction('onCallbackError', http.onCallbackError);
  const overrides = limiterOptions.overrides;
  if (typeof overrides === 'function') {
    limiterOptions.overrides = requestOverrides(
      overrides as (key: string, request: unknown) => unknown,
      onCallbackError as ((event: CallbackErrorEvent<unknown>) => void) | undefined,
    );
  }
  // A dry-run limit's rejections and delays are let through: its metrics say so (`dry_run="true"`).
  if (http.dryRun === true && limiterOptions.metrics !== undefined)
    limiterOptions.metrics = dryRunMetrics(limiterOptions.metrics);
  const limiter = resolveLimiter(http.limiter, limiterOptions, typeof cost === 'number' ? cost : undefined);

  const clock = limiterOptions.clock;
  return {
    limiter,
    ...resolveSharedHttpOptions<TRequest, THandler>(http),
    cost,
    headers: resolveHeaderMode(http.headers),
    onMissingKey: oneOf('onMissingKey', http.onMissingKey, MISSING_KEY_MODES, 'skip'),
    dryRun: boolean('dryRun', http.dryRun),
    onLimit: optionalFunction('onLimit', http.onLimit),
    onCallbackError,
    policyName: resolvePolicyName(http.policyName),
    now: typeof clock === 'function' ? (clock as () => number) : Date.now,
    passRequest: http.limiter !== undefined || typeof overrides === 'function',
    held: new HoldSlots(resolveMaxHeld(http.maxHeld)),
    countWhen: resolveCountWhen(http.countWhen, limiter, onCallbackError),
  };
}

function resolveLimiter(
  limiter: unknown,
  limiterOptions: Record<string, unknown>,
  cost: number | undefined,
): Limiter {
  if (limiter === undefined) {
    try {
      return createLimiter({
        ...limiterOptions,
        ...(cost === undefined ? {} : { cost }),
      } as unknown as LimiterOptions);
    } catch (error) {
      if (error instanceof SluiceConfigError && error.code === 'SLUICE_UNKNOWN_OPTION') {
        // Name the HTTP options too: a typo such as `keys` may have meant one of them.
        throw new SluiceConfigError(
          error.option,
          error.value,
          `${error.accepted}; HTTP options: ${HTTP_OPTION_NAMES.join(', ')}`,
          error.code,
        );
      }
      throw error;
    }
  }
  if (
    typeof limiter !== 'object' ||
    limiter === null ||
    typeof (limiter as Limiter).consume !== 'function' ||
    typeof (limiter as Limiter).peek !== 'function' ||
    // Called from a response's close listener when a held client leaves: checked here, not there.
    typeof (limiter as Limiter).cancel !== 'function'
  ) {
    throw new SluiceConfigError('limiter', limiter, 'expected a limiter from createLimiter()');
  }
  refuseLimiterOptions(limiterOptions);
  return limiter as Limiter;
}

/**
 * The options given to the limiter: every one that is not an HTTP option (`httpNames`) and not
 * `undefined`. Without a prototype, an own `__proto__` (JSON.parse makes one) is copied as an
 * option like any other, and the limiter refuses it as unknown, instead of becoming this
 * object's prototype.
 *
 * @param options - the options as the user gave them
 * @param httpNames - the HTTP options' names
 */
export function limiterOptionsOf(options: object, httpNames: ReadonlySet<string>): Record<string, unknown> {
  const limiterOptions = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of Object.entries(options)) {
    if (!httpNames.has(name) && value !== undefined) limiterOptions[name] = value;
  }
  return limiterOptions;
}

/**
 * Refuses limiter options given beside a ready `limiter`, naming the first.
 * @throws {@link SluiceConfigError} when `limiterOptions` has any
 */
export function refuseLimiterOptions(limiterOptions: Record<string, unknown>): void {
  const extra = Object.keys(limiterOptions)[0];
  if (extra !== undefined) {
    throw new SluiceConfigError(
      extra,
      limiterOptions[extra],
      'cannot be combined with a ready `limiter`: give limiter options or a limiter, not both',
    );
  }
}

/** The options `rateLimit` and `concurrencyLimit` share and read alike, as {@link resolveSharedHttpOptions} resolves them. */
interface SharedHttpOptions {
  readonly key?: unknown;
  readonly trustProxy?: unknown;
  readonly ipv6Subnet?: unknown;
  readonly skip?: unknown;
  readonly status?: unknown;
  readonly fallback?: unknown;
}

/**
 * Validates the options both kinds of HTTP limit share, in this order: `trustProxy`,
 * `ipv6Subnet`, `key`, `skip`, `status` (429 by default), `fallback`.
 *
 * @param http - the user's options
 * @throws {@link SluiceConfigError} naming the first invalid one
 */
export function resolveSharedHttpOptions<TRequest, THandler>(
  http: SharedHttpOptions,
): Pick<
  ResolvedLimit<TRequest, THandler>,
  'key' | 'template' | 'readsAddress' | 'skip' | 'status' | 'fallback'
> {
  const trust = compileTrustProxy(http.trustProxy as Parameters<typeof compileTrustProxy>[0]);
  const ipv6Subnet = resolveIpv6Subnet(http.ipv6Subnet as Parameters<typeof resolveIpv6Subnet>[0]);
  return {
    ...resolveKey(http.key as HttpLimitOptions<TRequest, () => void>['key'], trust, ipv6Subnet),
    skip: optionalFunction('skip', http.skip as ResolvedLimit<TRequest, THandler>['skip']),
    status: wholeNumberIn('status', http.status, 429, 400, 599),
    fallback: resolveFallback<THandler>(http.fallback),
  };
}

export function resolveKey<TRequest>(
  key: HttpLimitOptions<TRequest, () => void>['key'],
  trust: ReturnType<typeof compileTrustProxy>,
  ipv6Subnet: number,
): Pick<ResolvedLimit<TRequest, never>, 'key' | 'template' | 'readsAddress'> {
  if (key === undefined || typeof key === 'string') {
    const template = key ?? '$binary_remote_addr';
    const read = compileKeyTemplate(template, { trust, ipv6Subnet });
    return {
      key: (_request, view) => read(view),
      template: read,
      readsAddress: readsClientAddress(template),
    };
  }
  if (typeof key !== 'function') {
    throw new SluiceConfigError(
      'key',
      key,
      'expected nginx variables such as "$binary_remote_addr" or "$http_user_id:$arg_sku_id", or (req) => string | undefined',
    );
  }
  return { key: (request) => key(request), template: undefined, readsAddress: false };
}

function resolveHeaderMode(value: unknown): HeaderMode {
  if (value === undefined || value === true) return 'draft-8';
  if (value === false) return false;
  return oneOf('headers', value, HEADER_MODES, 'draft-8', ', or false');
}

function resolvePolicyName(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  // A structured-field string holds printable ASCII only (RFC 8941 §3.3.3).
  if (typeof value !== 'string' || !/^[\x20-\x7e]+$/.test(value)) {
    throw new SluiceConfigError('policyName', value, 'must be non-empty printable ASCII text');
  }
  return value;
}
