import type { CanActivate, ExecutionContext, OnModuleInit, Type } from '@nestjs/common';
import type { DiscoveryService, HttpAdapterHost, MetadataScanner, Reflector } from '@nestjs/core';
import { SluiceConfigError } from '@sluice/core';
import {
  checkDefaults,
  createHttpLimiter,
  definesLimit,
  scopedOptions,
  scopeNames,
  type RateLimitOptions,
} from '@sluice/core/adapter';
import {
  ADAPTIVE_LIMIT_METADATA,
  CONCURRENCY_LIMIT_METADATA,
  type AdaptiveLimitMetadata,
  RATE_LIMIT_METADATA,
  type RateLimitMetadata,
} from './decorators';
import type { RateLimitOptions as RouteOptions, SluiceModuleOptions } from './options';
import {
  adaptiveGate,
  concurrencyGate,
  platformGate,
  platformOf,
  type Fallback,
  type Gate,
  type Platform,
  type Verdict,
} from './platforms';

type Limits = RateLimitOptions<unknown, Fallback>;

/** The applications whose guard has started (by their `HttpAdapterHost`, one per application). */
const started = new WeakSet<object>();

/**
 * The guard `SluiceModule` registers as `APP_GUARD` (not meant for `@UseGuards`): on each HTTP
 * request it runs the route's limits (the handler's decorators, else the controller's, else the
 * module's), all built at start, so invalid options fail the start. Other requests pass untouched.
 */
export class SluiceGuard implements CanActivate, OnModuleInit {
  /** The module's limits on every route, when its options carry a rate; requests matching none count too. */
  readonly #every: Parameters<typeof platformGate>[0] | undefined;
  readonly #everyRoute: Gate | undefined;
  /** One object of defaults that decorators' options merge over; none when the module has a list. */
  readonly #defaults: RouteOptions<unknown, unknown> | undefined;
  /** Each `@RateLimit` use's limits by controller, then handler (a controller's also by its metadata). */
  readonly #routes = new WeakMap<object, WeakMap<object, Gate>>();
  /** The module's `adaptive` limit on every route, unless a route's `@AdaptiveLimit` replaces it. */
  readonly #everyAdaptive: Gate | undefined;
  /** Each `@AdaptiveLimit` and `@ConcurrencyLimit` use's gate, as `#routes`. */
  readonly #adaptive = new WeakMap<object, WeakMap<object, Gate>>();
  readonly #concurrency = new WeakMap<object, WeakMap<object, Gate>>();
  /** Controllers whose class name another controller has too: their name in scopes (`scopeNames`). */
  #names = new Map<object, string>();
  /** Handlers found under no key of their controller and without a name: a number each. */
  readonly #unnamed = new WeakMap<object, string>();
  #unnamedCount = 0;
  #platform: Platform | undefined;

  constructor(
    private readonly reflector: Reflector,
    options: SluiceModuleOptions<unknown, unknown>,
    private readonly adapterHost: HttpAdapterHost,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {
    if (typeof options !== 'object' || options === null) {
      throw new SluiceConfigError(
        'options',
        options,
        'expected SluiceModule options: an object such as { rate: "10r/s" }, or a list of limits',
      );
    }
    let adaptive: unknown;
    if (!Array.isArray(options)) ({ adaptive, ...options } = options as { adaptive?: unknown });
    const platform = () => this.#platformNow();
    this.#everyAdaptive =
      adaptive === undefined
        ? undefined
        : adaptiveGate({ limit: adaptive } as AdaptiveLimitMetadata, '', platform);
    this.#defaults = Array.isArray(options) ? undefined : (options as RouteOptions<unknown, unknown>);
    const defaults = this.#defaults;
    if (defaults !== undefined) checkDefaults(defaults);
    const complete = defaults === undefined || definesLimit(defaults);
    this.#every = complete ? createHttpLimiter<unknown, Fallback>(options as Limits | Limits[]) : undefined;
    this.#everyRoute = this.#every && platformGate(this.#every, platform);
  }

  /** Builds the limits of every decorated controller and route at start, not at their first request. */
  onModuleInit(): void {
    // One guard per application: a second import would limit every request once more.
    if (started.has(this.adapterHost)) {
      throw new SluiceConfigError(
        'SluiceModule',
        'forRoot',
        'imported more than once: each import adds a global guard, which would limit every request again; import it once, in the root module',
      );
    }
    started.add(this.adapterHost);
    // An application without HTTP (a microservice, `createApplicationContext`) has no adapter
    // (`null`): only HTTP requests are limited.
    const adapter = this.adapterHost.httpAdapter as HttpAdapterHost['httpAdapter'] | null | undefined;
    if (adapter !== undefined && adapter !== null) this.#platform = platformOf(adapter.getType());
    if (this.#platform && this.#every) this.#platform.unmatched(adapter?.getInstance(), this.#every as never);
    // From the classes, not their instances: a request-scoped controller has none yet.
    const controllers = this.discovery
      .getControllers()
      .map(({ metatype }) => metatype as unknown)
      .filter((metatype): metatype is Type<unknown> => typeof metatype === 'function');
    this.#nameApart(controllers);
    for (const metatype of controllers) {
      const prototype = metatype.prototype as Record<string, unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler !== 'function') continue;
        this.#gatesOf(handler, metatype);
      }
    }
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const [handler, controller] = [context.getHandler(), context.getClass()];
    const [rate, adaptive, concurrency] = this.#gatesOf(handler, controller);
    if (rate === undefined && adaptive === undefined && concurrency === undefined) return true;
    const http = context.switchToHttp();
    const [request, response] = [http.getRequest<unknown>(), http.getResponse<unknown>()];
    // Rate limits first: a request they refuse (or delay, then refuse) takes no permit, and an
    // adaptive limit measures only requests that do work.
    const then = (verdict: Verdict, gate: Gate | undefined): Verdict => {
      const next = (pass: boolean): Verdict => (!pass || gate === undefined ? pass : gate(request, response));
      return verdict === true || verdict === false ? next(verdict) : verdict.then(next);
    };
    const verdict = then(then(then(true, rate), adaptive), concurrency);
    // Refused: the reply is sent (or the client left). A guard's `false` would become a 403, so the
    // pipeline is left waiting on a promise of its own that never settles, collected with the
    // request (one shared promise would keep every waiting request alive).
    if (verdict === false) return new Promise<boolean>(() => undefined);
    if (verdict === true) return true;
    return verdict.then((pass) => pass || new Promise<boolean>(() => undefined));
  }

  /** A route's gates in the order they run: its rate limits, adaptive limit and concurrency limit. */
  #gatesOf(handler: object, controller: object): Array<Gate | undefined> {
    const at = [handler, controller] as const;
    type RateLimits = Exclude<RateLimitMetadata, false>;
    return [
      this.#decorated<RateLimits>(RATE_LIMIT_METADATA, this.#routes, at, this.#everyRoute, (m, scope) =>
        this.#routeGate(m.limits as RouteOptions<unknown, unknown>, scope),
      ),
      this.#decorated(ADAPTIVE_LIMIT_METADATA, this.#adaptive, at, this.#everyAdaptive, adaptiveGate),
      this.#decorated(CONCURRENCY_LIMIT_METADATA, this.#concurrency, at, undefined, concurrencyGate),
    ];
  }

  /**
   * A route's gate of decorator `key`: its handler's, else its controller's (one for its routes),
   * built once, scoped where the decorator is; `otherwise` without either, none when skipped.
   */
  #decorated<M extends object>(
    key: string,
    gates: WeakMap<object, WeakMap<object, Gate>>,
    [handler, controller]: readonly [object, object],
    otherwise: Gate | undefined,
    build: (metadata: M, scope: string, platform: () => Platform) => Gate,
  ): Gate | undefined {
    // Both are functions (a method, a class): Reflector reads the metadata Nest's decorators set on them.
    const targets = [handler, controller] as Array<Type<unknown>>;
    const metadata = this.reflector.getAllAndOverride<M | false | undefined, string>(key, targets);
    if (metadata === undefined) return otherwise;
    if (metadata === false) return undefined;
    let ofController = gates.get(controller);
    if (ofController === undefined) gates.set(controller, (ofController = new WeakMap()));
    // By handler: one decorator object on two methods (`const Strict = RateLimit(…)`) is two
    // routes, each with its own bucket, as when written out on each.
    let gate = ofController.get(handler);
    if (gate === undefined) {
      const own = this.reflector.get<unknown, string>(key, handler as Type<unknown>) === metadata;
      const name = this.#names.get(controller) ?? (controller as { name?: string }).name ?? 'controller';
      const platform = () => this.#platformNow();
      if (own) gate = build(metadata, `${name}.${this.#handlerName(handler, controller)}`, platform);
      else {
        // The controller's decorator: one bucket for all its routes.
        gate = ofController.get(metadata) ?? build(metadata, name, platform);
        ofController.set(metadata, gate);
      }
      ofController.set(handler, gate);
    }
    return gate;
  }

  /**
   * A handler's name in scopes: its key on the controller's class (a wrapping decorator's function
   * is named ''), else its own name, else a number: never one name for several handlers.
   */
  #handlerName(handler: object, controller: object): string {
    const key = keyHolding((controller as Type<unknown>).prototype, handler);
    if (key !== undefined) return key;
    const { name } = handler as { name?: unknown };
    if (typeof name === 'string' && name !== '') return name;
    // Nest routes only methods a controller declares: this is a handler from elsewhere.
    let unnamed = this.#unnamed.get(handler);
    if (unnamed === undefined) this.#unnamed.set(handler, (unnamed = `handler#${++this.#unnamedCount}`));
    return unnamed;
  }

  /** Names apart controllers of one class name (two API versions', a minified `e`) by path and version. */
  #nameApart(controllers: ReadonlyArray<Type<unknown>>): void {
    // A version may be a symbol (`VERSION_NEUTRAL`), which `join` cannot turn into text.
    const reflected = (key: string, controller: Type<unknown>): string =>
      [this.reflector.get<unknown, string>(key, controller) ?? []]
        .flat()
        .map((part) => (typeof part === 'symbol' ? 'neutral' : String(part)))
        .join(',');
    this.#names = scopeNames(
      controllers,
      (controller) => controller.name,
      (controller) => {
        const version = reflected('__version__', controller);
        return `${reflected('path', controller)}${version === '' ? '' : ` v${version}`}`;
      },
    );
  }

  /** Chosen once: at start, or at the first request if the guard was never initialized. */
  #platformNow(): Platform {
    return (this.#platform ??= platformOf(this.adapterHost.httpAdapter.getType()));
  }

  /** The gate of a decorator's limits over the module's defaults, if one object, with their own buckets (`prefix`). */
  #routeGate(
    limits: RouteOptions<unknown, unknown> | ReadonlyArray<RouteOptions<unknown, unknown>>,
    scope: string,
  ): Gate {
    const own = (options: RouteOptions<unknown, unknown>): Limits =>
      scopedOptions(this.#defaults ?? {}, options, scope);
    const all = Array.isArray(limits) ? limits.map(own) : own(limits as RouteOptions<unknown, unknown>);
    return platformGate(createHttpLimiter<unknown, Fallback>(all), () => this.#platformNow());
  }
}

/** The key under which `prototype` or one it inherits from holds `value`, read from descriptors (no getter runs). */
function keyHolding(prototype: unknown, value: object): string | undefined {
  let on = prototype;
  while (typeof on === 'object' && on !== null && on !== Object.prototype) {
    const holder = on;
    const key = Reflect.ownKeys(holder).find(
      (key) => Object.getOwnPropertyDescriptor(holder, key)?.value === value,
    );
    if (key !== undefined) return String(key);
    on = Object.getPrototypeOf(holder) as unknown;
  }
  return undefined;
}
