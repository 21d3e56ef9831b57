import type { HttpRequest, RequestView } from '../keys/http-request';
import { SluiceConfigError } from '../policy/config-error';
import { MAX_LIMIT } from '../policy/rate';
import type { CallbackErrorEvent, CallbackSource, MaybePromise } from './http-options';
import { callListener, isThenable } from '../limiter/thenable';

// The user's key, cost, skip and fallback functions never fail a request: each failure is
// reported and has one documented outcome (see CallbackErrorEvent), so a bug or a hostile request
// cannot become a 500, a hanging request or a free pass.

/** What sluice does instead, per failing function: the wording users read in the error. */
const INSTEAD: Record<CallbackSource, string> = {
  key: 'the request is treated as having no key (onMissingKey decides)',
  cost: "the request is counted at the limiter's default cost",
  skip: 'the request is not skipped',
  overrides: "the key is limited by the limit's own rate",
  fallback: 'the default rejection is sent instead (or the response ended, if the handler had begun it)',
  priority: "the request is counted in the partition '*'",
};

/** What a function must return, where sluice checks it (`skip` is read as true or false). */
const EXPECTED: Partial<Record<CallbackSource, string>> = {
  key: 'a string, or undefined when the request has no key',
  cost: `a whole number from 0 to ${MAX_LIMIT}`,
  overrides: 'a rate, a list of rates or undefined, at once (not a promise)',
};

/**
 * The user's functions of one limit, validated, as this file calls them: the part of a resolved
 * limit (`ResolvedLimit` of resolve-http-options.ts, which extends it) that it reads.
 */
export interface UserCallbacks<TRequest> {
  /** The key of a request; a function's result is checked here (see {@link keyOf}). */
  readonly key: (request: TRequest, view: RequestView) => MaybePromise<unknown>;
  /** A fixed cost (`undefined`: the limiter's own default, taken as 1 when predicting) or a function. */
  readonly cost: number | undefined | ((request: TRequest) => MaybePromise<number>);
  readonly skip: ((request: TRequest) => MaybePromise<boolean>) | undefined;
  readonly onCallbackError: ((event: CallbackErrorEvent<TRequest>) => void) | undefined;
}

/** What a user function did wrong: threw (or rejected) `thrown`, or returned `returned`. */
export type CallbackFailure = { readonly threw: unknown } | { readonly returned: unknown };

/**
 * The error reported when a user function fails: a {@link SluiceConfigError} (code
 * `SLUICE_INVALID_ARGUMENT`) naming the option, what went wrong and what sluice did instead, e.g.
 * `cost NaN: the function returned it, expected a whole number from 0 to 1000000000; the request
 * is counted at the limiter's default cost`. What was thrown is kept as `cause`.
 *
 * @param source - the option whose function failed
 * @param failure - what it threw or returned
 * @example
 * ```ts
 * callbackError('skip', { threw: new Error('db down') }).message;
 * // 'skip "Error: db down": the function threw; the request is not skipped'
 * ```
 */
export function callbackError(source: CallbackSource, failure: CallbackFailure): SluiceConfigError {
  if ('threw' in failure) {
    const { threw } = failure;
    // The message names what was thrown; an Error would otherwise render as '{}'.
    const shown = threw instanceof Error ? `${threw.name}: ${threw.message}` : threw;
    const error = new SluiceConfigError(
      source,
      shown,
      `the function threw; ${INSTEAD[source]}`,
      'SLUICE_INVALID_ARGUMENT',
    );
    error.cause = threw;
    return error;
  }
  return new SluiceConfigError(
    source,
    failure.returned,
    `the function returned it, expected ${EXPECTED[source] ?? 'another value'}; ${INSTEAD[source]}`,
    'SLUICE_INVALID_ARGUMENT',
  );
}

const warned = new WeakSet<object>();

/**
 * Hands a failure to the limit's `onCallbackError`. As with limiter events, a listener that throws
 * never breaks the request: it is reported once per listener as a process warning.
 *
 * @param listener - the `onCallbackError` option, if any
 * @param event - the failure
 */
function reportCallbackError<TRequest>(
  listener: ((event: CallbackErrorEvent<TRequest>) => void) | undefined,
  event: CallbackErrorEvent<TRequest>,
): void {
  if (listener === undefined) return;
  callListener(listener, event, (error) => {
    if (warned.has(listener)) return;
    warned.add(listener);
    process.emitWarning(
      `a sluice onCallbackError listener threw (ignored; further ones are not reported): ${String(error)}`,
      'SluiceListenerWarning',
    );
  });
}

/** Whether `skip` says to skip the request; `false` when it throws. */
export async function skipOf<TRequest>(
  limit: Pick<UserCallbacks<TRequest>, 'skip' | 'onCallbackError'>,
  request: TRequest,
): Promise<boolean> {
  try {
    return Boolean(await (limit.skip as NonNullable<typeof limit.skip>)(request));
  } catch (threw) {
    reportFailure(limit, request, 'skip', { threw });
    return false;
  }
}

/**
 * The key from the limit's template or function: `''` (no key) when the function throws or
 * returns what is not a key.
 */
export async function keyOf<TRequest>(
  limit: Pick<UserCallbacks<TRequest>, 'key' | 'onCallbackError'>,
  request: TRequest,
  view: RequestView,
): Promise<string> {
  let value: unknown;
  try {
    value = await limit.key(request, view);
  } catch (threw) {
    reportFailure(limit, request, 'key', { threw });
    return '';
  }
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  // An object or array would become '[object Object]' or 'a,b': one bucket for unrelated requests.
  reportFailure(limit, request, 'key', { returned: value });
  return '';
}

/**
 * The key of a limit keyed by nginx variables, as the fast paths read it (at once, no promise):
 * `undefined` when the general path must decide — a client that is gone while the key reads its
 * address (refused there), a missing key that is not shared, or a variable given several
 * differing values (`RequestView.several`; all rare). The template is pure, so the general path
 * reading it again is fine.
 */
export function templateKeyOf(
  limit: {
    readonly template: ((view: RequestView) => string) | undefined;
    readonly readsAddress: boolean;
    readonly onMissingKey: string;
  },
  http: HttpRequest,
  view: RequestView,
): string | undefined {
  if (limit.template === undefined) return undefined;
  if (http.remoteAddress === undefined && limit.readsAddress) return undefined;
  view.several = false;
  const key = limit.template(view);
  if (view.several) return undefined;
  return key === '' && limit.onMissingKey !== 'shared' ? undefined : key;
}

/**
 * The cost, fixed or from the function: `undefined` (the limiter's default) when the function
 * throws or returns what is not a valid cost.
 */
export async function costOf<TRequest>(
  limit: UserCallbacks<TRequest>,
  request: TRequest,
  key: string,
): Promise<number | undefined> {
  if (typeof limit.cost !== 'function') return limit.cost;
  let value: unknown;
  try {
    value = await limit.cost(request);
  } catch (threw) {
    reportFailure(limit, request, 'cost', { threw }, key);
    return undefined;
  }
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_LIMIT) return value;
  // `undefined` consumes the limiter's default cost: a broken cost function never admits for free.
  reportFailure(limit, request, 'cost', { returned: value }, key);
  return undefined;
}

/** Builds the error for a failure and hands it to the limit's `onCallbackError`. */
export function reportFailure<TRequest>(
  limit: Pick<UserCallbacks<TRequest>, 'onCallbackError'>,
  request: TRequest,
  source: CallbackSource,
  failure: CallbackFailure,
  key?: string,
): void {
  const error = callbackError(source, failure);
  reportCallbackError(
    limit.onCallbackError,
    key === undefined ? { request, source, error } : { request, source, error, key },
  );
}

/**
 * The user's `overrides` function as the limiter calls it: with the framework's request as
 * `context`. One that throws leaves the key on the limit's own rate, reported to `onCallbackError`
 * (source `'overrides'`) when there is a request; without one (`limiter.reset(key)`, the look-ahead
 * of several limits) a function reading the request throws, and the limit's own rate is meant.
 */
export function requestOverrides(
  overrides: (key: string, request: unknown) => unknown,
  onCallbackError: ((event: CallbackErrorEvent<unknown>) => void) | undefined,
): (key: string, context?: unknown) => unknown {
  return function sluiceOverrides(key: string, context?: unknown): unknown {
    let value: unknown;
    try {
      value = overrides(key, context);
    } catch (threw) {
      if (context !== undefined) reportFailure({ onCallbackError }, context, 'overrides', { threw }, key);
      return undefined;
    }
    if (!isThenable(value)) return value;
    // An async function: the limit's own rate, reported; and what it rejects with, reported too
    // (unhandled, a rejection ends the process: a client could make it reject on purpose).
    const report = (failure: CallbackFailure): void => {
      if (context !== undefined) reportFailure({ onCallbackError }, context, 'overrides', failure, key);
    };
    value.then(undefined, (threw: unknown) => report({ threw }));
    report({ returned: value });
    return undefined;
  };
}

/** Limits whose `onLimit` threw once already. */
const warnedLimits = new WeakSet<object>();

/**
 * Calls a limit's `onLimit` (rate and concurrency limits alike); as with limiter events, a
 * listener that throws never breaks the request, and is reported once per limit.
 */
export function notify<TEvent>(
  limit: { readonly onLimit?: ((event: TEvent) => void) | undefined },
  event: TEvent,
): void {
  if (limit.onLimit === undefined) return;
  callListener(limit.onLimit, event, (error) => {
    if (warnedLimits.has(limit)) return;
    warnedLimits.add(limit);
    process.emitWarning(
      `a sluice onLimit listener threw (ignored; further ones are not reported): ${String(error)}`,
      'SluiceListenerWarning',
    );
  });
}
