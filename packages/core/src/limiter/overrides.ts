import { describeValue, SluiceConfigError } from '../policy/config-error';
import type { RateInput } from '../policy/rate';
import { resolvePolicy, type PolicyOptions } from '../policy/resolve-policy';
import type { Policy } from '../types';
import { isThenable } from './thenable';
import { MAX_RULES } from './rules';

/** What an override gives a key: a rate, or several (each a limit of its own, all must admit). */
export type OverrideRate = RateInput | readonly RateInput[];

/**
 * Per-key limits. An object or `Map` from key to rate, read on every request, so changing an
 * entry takes effect on the key's next request; or a function of the key (and, from the HTTP
 * layer, of the request as `context`) returning a rate, or `undefined` for the limiter's own.
 * The function answers at once: a promise (an `async` function) gets the limiter's own rate and
 * is reported (`overrideError`; from the HTTP layer `onCallbackError`, with what it rejected with).
 */
export type Overrides =
  | Readonly<Record<string, OverrideRate | undefined>>
  | ReadonlyMap<string, OverrideRate | undefined>
  | ((key: string, context?: unknown) => OverrideRate | null | undefined);

/** The limit an overridden key gets. */
export interface OverrideTarget {
  /** The override's policies: one per rate. */
  readonly policies: readonly Policy[];
  /**
   * The key's state namespace under this override: its rates as written, comma-separated.
   * Another rate is another namespace, so changing a key's override starts it fresh.
   */
  readonly scope: string;
}

/** What an override's rate shares with the limiter: everything but the rate. */
export type OverrideBase = Omit<PolicyOptions, 'rate'>;

/** The namespace of an override's state: its rates, as written (`'10r/s'`, `'10r/s,1000/1h'`). */
export function scopeOf(policies: readonly Policy[]): string {
  return policies.map((policy) => policy.source).join(',');
}

export interface OverridesOptions {
  /** `algorithm`, `burst`, `nodelay` and `delay` every override uses (with `rules`, the first rule's). */
  readonly base: OverrideBase;
  /** Whether the store can decide several rules at once (an override with a list of rates needs it). */
  readonly rulesSupported: boolean;
  /** Called once per distinct invalid value: the key is then limited by the limiter's own rate. */
  readonly onError: (error: SluiceConfigError, key: string, value: unknown) => void;
}

/** Text values remembered at once; a function making up endless rates cannot grow memory. */
const MAX_CACHED_TEXTS = 1024;

/**
 * Validates `overrides` (every entry of an object or `Map` given now, so a typo throws at
 * creation) and returns the per-request lookup: `undefined` for a key without an override (or
 * with an invalid one, reported through `onError`). Parsed policies are cached by the rate's text
 * (strings) or identity (objects and lists: replace one to change it, do not mutate it), so the
 * usual request allocates nothing.
 *
 * @throws {@link SluiceConfigError} naming `overrides` or the invalid entry
 */
export function createOverrides(
  overrides: unknown,
  { base, rulesSupported, onError }: OverridesOptions,
): (key: string, context?: unknown) => OverrideTarget | undefined {
  const texts = new Map<string, OverrideTarget | SluiceConfigError>();
  const objects = new WeakMap<object, OverrideTarget | SluiceConfigError>();

  const parse = (value: OverrideRate): OverrideTarget | SluiceConfigError => {
    try {
      const rates: readonly RateInput[] = Array.isArray(value) ? value : [value as RateInput];
      // As `rate: [...]`: one script call decides every rate, so their number is bounded.
      if (rates.length === 0 || rates.length > MAX_RULES)
        throw new SluiceConfigError('rate', value, `expected a rate or a list of 1 to ${MAX_RULES} rates`);
      if (rates.length > 1 && !rulesSupported) {
        throw new SluiceConfigError(
          'rate',
          value,
          'several rates need a store with consumeRules (MemoryStore, RedisStore)',
        );
      }
      const policies = rates.map((rate) => resolvePolicy({ ...base, rate }));
      return { policies, scope: scopeOf(policies) };
    } catch (error) {
      if (error instanceof SluiceConfigError) return error;
      throw error;
    }
  };

  /** The value's target, parsed on its first use; an invalid value is reported then, once. */
  const targetOf = (key: string, value: OverrideRate): OverrideTarget | SluiceConfigError => {
    const isText = typeof value === 'string';
    let target = isText ? texts.get(value) : isObject(value) ? objects.get(value) : undefined;
    if (target !== undefined) return target;
    target = parse(value);
    if (isText) {
      if (texts.size >= MAX_CACHED_TEXTS) texts.clear();
      texts.set(value, target);
    } else if (isObject(value)) {
      objects.set(value, target);
    }
    if (target instanceof SluiceConfigError) onError(named(target, key), key, value);
    return target;
  };

  const resolve = (key: string, value: OverrideRate | null | undefined): OverrideTarget | undefined => {
    if (value === undefined || value === null) return undefined;
    const target = targetOf(key, value);
    return target instanceof SluiceConfigError ? undefined : target;
  };

  if (typeof overrides === 'function') {
    const lookup = overrides as (key: string, context?: unknown) => OverrideRate | null | undefined;
    return (key, context) => {
      const value: unknown = lookup(key, context);
      return isThenable(value)
        ? promised(key, value)
        : resolve(key, value as OverrideRate | null | undefined);
    };
  }
  if (overrides instanceof Map) {
    const map = overrides as ReadonlyMap<unknown, OverrideRate | undefined>;
    for (const [key, value] of map) {
      // Requests are limited by text: a key of another type would never match, silently.
      if (typeof key !== 'string') {
        throw new SluiceConfigError(
          'overrides',
          key,
          'keys are strings: a request is limited by text, so write 1001 as "1001"',
        );
      }
      checkNow(key, value);
    }
    return (key) => resolve(key, map.get(key));
  }
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    throw new SluiceConfigError(
      'overrides',
      overrides,
      "expected an object or Map from key to rate ({ 'sku:1001': '10r/s' }) or a function (key) => rate | undefined",
    );
  }
  const table = overrides as Readonly<Record<string, OverrideRate | undefined>>;
  for (const key of Object.keys(table)) checkNow(key, table[key]);
  // Own entries only: a key such as 'constructor' must not find Object.prototype's. (A `Map` is
  // the faster table: an object is looked up by a string built per request.)
  return (key) => resolve(key, Object.hasOwn(table, key) ? table[key] : undefined);

  /**
   * An async function's answer: the limiter's own rate, reported through `onError`. What the
   * promise rejects with is dropped here: unhandled, a rejection ends the process.
   */
  function promised(key: string, value: PromiseLike<unknown>): undefined {
    value.then(undefined, ignore);
    const error = new SluiceConfigError(
      'overrides',
      value,
      'the function returned a promise: it must return a rate, a list of rates or undefined at once (look slow data up before, e.g. in a middleware)',
    );
    onError(named(error, key), key, value);
    return undefined;
  }

  function checkNow(key: string, value: OverrideRate | undefined): void {
    if (value === undefined || value === null) return;
    const target = parse(value);
    if (target instanceof SluiceConfigError) throw named(target, key);
  }
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/** `rate "6r/x": …` → `overrides["sku:1"] "6r/x": …`. */
function named(error: SluiceConfigError, key: string): SluiceConfigError {
  return error.renamed(`overrides[${describeValue(key)}]`);
}

function ignore(): void {
  // Reported as the function's error already: a promise is no rate.
}
