import type { Limiter } from '../limiter/create-limiter';
import type { RuleOptions } from '../limiter/rules';
import type { HttpLimitOptions, HttpOverrides, LimiterOnlyOptions, RateLimitOptions } from './http-options';
import { resolvePolicy, type PolicyOptions } from '../policy/resolve-policy';
import { HTTP_OPTION_NAMES } from './resolve-http-options';

/** The options that describe one rate and mean nothing with another. */
const RATE_SHAPING = ['burst', 'algorithm', 'nodelay', 'delay'] as const;
/** What `rules` replaces: each rule sets these itself, and `createLimiter` refuses them beside it. */
const REPLACED_BY_RULES = ['rate', ...RATE_SHAPING, 'queue'] as const;

/**
 * Options that may lack a `rate`: defaults for a group of routes (a Fastify plugin registration),
 * or one route's own options merged over them.
 */
export type PartialRateLimitOptions<
  TRequest,
  THandler extends (...args: never[]) => unknown,
  TResponse = unknown,
> = HttpLimitOptions<TRequest, THandler, TResponse> &
  Partial<Omit<LimiterOnlyOptions, 'rules'>> & {
    rules?: readonly RuleOptions[];
    overrides?: HttpOverrides<TRequest>;
    limiter?: Limiter;
  };

/**
 * Whether options say what is limited — their own `rate`, `rules` or `limiter` — and so make a
 * limit by themselves: shared defaults that do limit every route (a Fastify plugin's, Nest's
 * module options), and a scope's options that replace the defaults' `limiter`.
 *
 * @param options - shared defaults or a scope's own options
 * @example
 * ```ts
 * // A plugin's options: a limit on every route, or defaults for the routes that set their own.
 * const everyRoute = definesLimit(defaults) ? createHttpLimiter(defaults) : undefined;
 * ```
 */
export function definesLimit(
  options: Pick<PartialRateLimitOptions<never, never>, 'rate' | 'rules' | 'limiter'>,
): boolean {
  return options.rate !== undefined || options.rules !== undefined || options.limiter !== undefined;
}

/**
 * One scope's options (a route's) merged over shared defaults (a plugin's), once, at route definition:
 *
 * - the scope's own options win;
 * - a scope with its own `rate` does not inherit the defaults' `burst`, `algorithm`, `nodelay` or
 *   `delay`: they shape the defaults' rate (a plugin's `burst: 20` is no burst for a login's `'5/15m'`);
 * - a scope with its own `rules` inherits none of the defaults' `rate`, `burst`, `algorithm`,
 *   `nodelay`, `delay` or `queue` (each rule sets its own), and one with its own `rate` none of
 *   their `rules`;
 * - a scope with its own `rate`, `rules` or `limiter` does not inherit the defaults' `limiter`, and one with
 *   its own `limiter` inherits only HTTP options (`key`, `headers`, …), never limiter options;
 * - a scope without its own `prefix` gets `<prefix>:<scope>`: each scope has its own buckets, also
 *   in a store the defaults share between scopes (as with the default per-limiter MemoryStore).
 *
 * @param defaults - the shared options
 * @param own - the scope's options
 * @param scope - a name unique to the scope, e.g. `'GET /sku'`
 * @example
 * ```ts
 * scopedOptions({ store, headers: 'legacy' }, { rate: '6r/m' }, 'GET /sku');
 * // { store, headers: 'legacy', rate: '6r/m', prefix: 'sluice:GET /sku' }
 * ```
 */
export function scopedOptions<TRequest, THandler extends (...args: never[]) => unknown, TResponse = unknown>(
  defaults: PartialRateLimitOptions<TRequest, THandler, TResponse>,
  own: PartialRateLimitOptions<TRequest, THandler, TResponse>,
  scope: string,
): RateLimitOptions<TRequest, THandler, TResponse> {
  const base: Record<string, unknown> = { ...defaults };
  if (definesLimit(own)) delete base.limiter;
  if (own.rate !== undefined) {
    delete base.rules;
    for (const name of RATE_SHAPING) delete base[name];
  }
  if (own.rules !== undefined) for (const name of REPLACED_BY_RULES) delete base[name];
  if (own.limiter !== undefined) {
    for (const name of Object.keys(base)) {
      if (!(HTTP_OPTION_NAMES as readonly string[]).includes(name)) delete base[name];
    }
  } else if (own.prefix === undefined) {
    base.prefix = `${defaults.prefix ?? 'sluice'}:${scope}`;
  }
  return { ...base, ...own } as RateLimitOptions<TRequest, THandler, TResponse>;
}

/**
 * Checks the rate-shaping values of defaults that do not limit by themselves (a Fastify plugin's,
 * a Nest module's), at registration: a route whose own `rate` replaces them would otherwise
 * never look at them, and a typo (`algorithm: 'leaky'`) would pass unseen. Each value is checked
 * as `createLimiter` checks it, beside a placeholder rate and the algorithm it implies.
 *
 * @throws {@link SluiceConfigError} naming the first invalid value
 */
export function checkDefaults<TRequest, THandler extends (...args: never[]) => unknown, TResponse = unknown>(
  defaults: PartialRateLimitOptions<TRequest, THandler, TResponse>,
): void {
  if (definesLimit(defaults)) return; // checked whole, as the limit on every route
  const { algorithm, burst, nodelay, delay, queue } = defaults as PolicyOptions;
  if ([algorithm, burst, nodelay, delay, queue].every((value) => value === undefined)) return;
  const leaky = nodelay !== undefined || delay !== undefined;
  resolvePolicy({
    rate: '1r/s',
    algorithm: algorithm ?? (leaky ? 'leaky-bucket' : 'gcra'),
    ...(burst === undefined ? {} : { burst }),
    ...(nodelay === undefined ? {} : { nodelay }),
    ...(delay === undefined ? {} : { delay }),
    ...(queue === undefined ? {} : { queue }),
  });
}
