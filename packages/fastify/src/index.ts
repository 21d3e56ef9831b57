import { SluiceConfigError, type Decision } from '@sluice/core';
import {
  createHttpLimiter,
  checkDefaults,
  definesLimit,
  namingAdapterOptions,
  notFoundHook,
  scopedOptions,
} from '@sluice/core/adapter';
import type { DecisionFallback, PartialRateLimitOptions, RateLimitOptions } from '@sluice/core/adapter';
import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';
import { gateOf, hookOf } from './gate';

/** A fallback handler: sends a reply in place of the rejection, with the decision at hand. */
export type FastifyFallback = DecisionFallback<FastifyRequest, FastifyReply, Decision>;

/**
 * One limit's options for a route (`config: { rateLimit }`), merged over the plugin's (see core's
 * `PartialRateLimitOptions`), with Fastify's `request` in callbacks; `countWhen` gets
 * `(request, reply)` once the response is done.
 *
 * @example
 * ```ts
 * app.post('/login', { config: { rateLimit: { key: '$remote_addr', rate: '5/15m', countWhen: 'failed' } } }, login);
 * app.get('/search', { config: { rateLimit: { rate: '100/1m', countWhen: (request, reply) => reply.statusCode !== 304 } } }, search);
 * ```
 */
export type SluiceRouteOptions = PartialRateLimitOptions<FastifyRequest, FastifyFallback, FastifyReply>;

/** Options of the plugin: defaults for every route; with a `rate` (or `rules`, or a `limiter`), a limit on every route. */
export type SluicePluginOptions = SluiceRouteOptions & {
  /** The hook that limits: `'preHandler'` when keys need what auth hooks set on the request. @defaultValue `'onRequest'` */
  hook?: 'onRequest' | 'preHandler';
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** sluice limits of this route (one, or several in order), merged over the plugin's options; `false` exempts the route. */
    rateLimit?: SluiceRouteOptions | readonly SluiceRouteOptions[] | false;
  }
}

type Options = RateLimitOptions<FastifyRequest, FastifyFallback, FastifyReply>;

/**
 * A route's constraints, sorted, as the end of its scope (`GET /who [host=/^shop\./i,version=2.0.0]`):
 * routes Fastify tells apart by them get their own buckets; none, no text (the scope as it was).
 */
function constraintsText(constraints: RouteOptions['constraints']): string {
  const pairs = Object.entries(constraints ?? {})
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    // A RegExp host as its literal (`/^shop\./i`); a custom strategy's object value as JSON.
    .map(
      ([name, v]) =>
        `${name}=${v instanceof RegExp || typeof v !== 'object' ? String(v) : JSON.stringify(v)}`,
    );
  return pairs.length === 0 ? '' : ` [${pairs.join(',')}]`;
}

/**
 * The sluice Fastify plugin (Fastify 4 and 5). With a `rate` (or `rules`) it limits every route
 * and the not-found handler (`$route` `'(not found)'`); without, only routes whose
 * `config.rateLimit` sets one; `config: { rateLimit: false }` exempts a route. A GET's automatic
 * HEAD route shares its bucket. Register it before its routes; invalid options fail `register`
 * or the route's definition, never a request.
 *
 * @param fastify - the instance
 * @param options - defaults for every route, and a limit on every route when they carry a `rate`
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import sluice from '@sluice/fastify';
 *
 * const app = Fastify();
 * await app.register(sluice, { rate: '10r/s', burst: 20 });
 * app.get('/sku', { config: { rateLimit: { key: '$arg_sku_id', rate: '6r/m' } } }, async () => 'ok');
 * app.get('/health', { config: { rateLimit: false } }, async () => 'ok');
 * ```
 */
async function sluicePlugin(fastify: FastifyInstance, options: SluicePluginOptions): Promise<void> {
  const { hook = 'onRequest', ...defaults } = options;
  if (hook !== 'onRequest' && hook !== 'preHandler') {
    throw new SluiceConfigError('hook', hook, "expected 'onRequest' or 'preHandler'");
  }
  // A typo of `hook` is reported as unknown: its message names the plugin's own option too.
  const limitsOf = (limits: Options | readonly Options[]) =>
    namingAdapterOptions(['hook'], 'Fastify plugin options (not per route)', () =>
      createHttpLimiter<FastifyRequest, FastifyFallback, FastifyReply>(limits),
    );
  const hookFor = (limits: Options | readonly Options[]): onRequestHookHandler =>
    hookOf(gateOf(limitsOf(limits)), 'sluiceRateLimit');
  checkDefaults(defaults);
  const every = definesLimit(defaults) ? limitsOf(defaults as Options) : undefined;
  const everyRoute = every === undefined ? undefined : hookOf(gateOf(every), 'sluiceRateLimit');
  // The not-found handler runs in no route: the same buckets count its requests (see notFoundHook).
  if (every !== undefined) fastify.addHook(hook as 'onRequest', notFoundHook(every));

  // Each GET route's gate by its `rateLimit` options, URL and constraints: Fastify's automatic HEAD
  // route (`exposeHeadRoutes`) has the GET's very options object, URL (or, for `/` under a prefix,
  // the URL with a slash more) and constraints, and so shares the GET's gate and buckets.
  const getGates = new WeakMap<object, Map<string, onRequestHookHandler>>();
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const config = route.config?.rateLimit;
    if (config === false || (config === undefined && everyRoute === undefined)) return;
    const methods = [route.method].flat();
    const constraints = constraintsText(route.constraints);
    const where = `${route.url}${constraints}`;
    const scope = `${methods.join(',')} ${where}`;
    const own = (c: SluiceRouteOptions): Options => scopedOptions(defaults, c, scope);
    let handler = everyRoute as onRequestHookHandler;
    if (config !== undefined) {
      const gets = getGates.get(config) ?? new Map<string, onRequestHookHandler>();
      const head = methods.length === 1 && methods[0] === 'HEAD';
      const getGate = head
        ? (gets.get(where) ?? gets.get(`${route.url.replace(/(.)\/$/, '$1')}${constraints}`))
        : undefined;
      handler =
        getGate ?? hookFor(Array.isArray(config) ? config.map(own) : own(config as SluiceRouteOptions));
      if (methods.includes('GET')) getGates.set(config, gets.set(where, handler));
    }
    const existing = route[hook];
    route[hook] = [...(existing === undefined ? [] : [existing].flat()), handler] as never;
  });
}

/** The plugin, wrapped by fastify-plugin so its hooks reach the routes of the instance it is registered on. */
export const sluice: FastifyPluginAsync<SluicePluginOptions> = fp(sluicePlugin, {
  fastify: '4.x || 5.x',
  name: '@sluice/fastify',
});
export default sluice;

/**
 * Rate-limits one `(request, reply)` controller method: a standard (TC39) method decorator. A
 * limited request never reaches it.
 *
 * @param options - one limit, or several in order
 * @throws `SluiceConfigError` when the class is defined, naming the first invalid option
 * @example
 * ```ts
 * class ShopController {
 *   @RateLimit({ key: '$arg_sku_id', rate: '6r/m' })
 *   async sku(request: FastifyRequest, reply: FastifyReply) {
 *     return { ok: true };
 *   }
 * }
 * const shop = new ShopController();
 * app.get('/sku', (request, reply) => shop.sku(request, reply));
 * ```
 */
export function RateLimit(options: Options | readonly Options[]) {
  const gate = gateOf(createHttpLimiter<FastifyRequest, FastifyFallback, FastifyReply>(options));
  return function decorate<
    This,
    Method extends (this: This, request: FastifyRequest, reply: FastifyReply) => unknown,
  >(method: Method, _context: ClassMethodDecoratorContext<This, Method>): Method {
    async function sluiceRateLimited(
      this: This,
      request: FastifyRequest,
      reply: FastifyReply,
    ): Promise<unknown> {
      if (!(await gate(request, reply))) return reply;
      const result = method.call(this, request, reply);
      // A callback-style handler returns nothing and sends later: `reply` tells Fastify to wait.
      return result === undefined ? reply : result;
    }
    return sluiceRateLimited as Method;
  };
}

export type { ConcurrencyDecision, Decision } from '@sluice/core';
export type {
  CallbackErrorEvent,
  CallbackSource,
  CountWhen,
  ConcurrencyLimitEvent,
  HeaderMode,
  JsonValue,
  LimitEvent,
  MissingKeyMode,
  StaticFallback,
  TrustProxy,
} from '@sluice/core/adapter';

export type { Options as RateLimitOptions };
export { adaptiveLimit, concurrencyLimit } from './adaptive-limit';
export type {
  AdaptiveLimitOptions,
  ConcurrencyLimitOptions,
  FastifyAdaptiveFallback,
  FastifyConcurrencyFallback,
} from './adaptive-limit';
