import type { CanActivate, ExecutionContext, OnModuleInit, Type } from '@nestjs/common';
import type { DiscoveryService, HttpAdapterHost, MetadataScanner, Reflector } from '@nestjs/core';
import {
  createHttpLimiter,
  scopedOptions,
  SluiceConfigError,
  type HttpOutcome,
  type RateLimitOptions,
} from '@sluice/core';
import { RATE_LIMIT_METADATA, type RateLimitMetadata } from './decorators';
import type { NestFallback, RateLimitOptions as RouteOptions, SluiceModuleOptions } from './options';
import { platformOf, type Platform, type Verdict } from './platforms';

type Fallback = NestFallback<unknown, unknown>;
type Limits = RateLimitOptions<unknown, Fallback>;
/** Runs one set of limits for a request: `true` when it may go on. */
type Gate = (request: unknown, response: unknown) => Verdict;

/**
 * The guard `SluiceModule` registers as `APP_GUARD`: on each HTTP request it finds the limits of
 * the route (the handler's `@RateLimit` or `@SkipRateLimit`, else the controller's, else the
 * module's), asks the core, and writes what it decided on the platform's response. Every set of
 * limits is built once, when the module starts, so invalid options fail the application's start.
 * Requests of other kinds (microservices, WebSockets, GraphQL resolvers) pass untouched.
 * Nest's injector builds it for `SluiceModule`; it is not meant for `@UseGuards`.
 */
export class SluiceGuard implements CanActivate, OnModuleInit {
  /** The module's limits on every route, when its options carry a rate. */
  readonly #everyRoute: Gate | undefined;
  /** One object of defaults that decorators' options merge over; none when the module has a list. */
  readonly #defaults: RouteOptions<unknown, unknown> | undefined;
  /** The limits of each `@RateLimit` use, by its metadata. */
  readonly #routes = new WeakMap<object, Gate>();
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
    const list = Array.isArray(options);
    this.#defaults = list ? undefined : (options as RouteOptions<unknown, unknown>);
    const defaults = this.#defaults;
    const complete =
      defaults === undefined ||
      defaults.rate !== undefined ||
      defaults.rules !== undefined ||
      defaults.limiter !== undefined;
    this.#everyRoute = complete ? this.#gate(options as Limits | readonly Limits[]) : undefined;
  }

  /** Builds the limits of every decorated controller and route now, at start, not at their first request. */
  onModuleInit(): void {
    // An application without HTTP (a microservice) has no adapter: only HTTP requests are limited.
    const adapter = this.adapterHost.httpAdapter as HttpAdapterHost['httpAdapter'] | undefined;
    if (adapter !== undefined) this.#platform = platformOf(adapter.getType());
    // From the classes, not their instances: a request-scoped controller has none yet.
    for (const { metatype } of this.discovery.getControllers()) {
      if (typeof metatype !== 'function') continue;
      const prototype = metatype.prototype as Record<string, unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler === 'function') this.#limitsOf(handler, metatype);
      }
    }
  }

  canActivate(context: ExecutionContext): Verdict {
    if (context.getType() !== 'http') return true;
    const gate = this.#limitsOf(context.getHandler(), context.getClass());
    if (gate === undefined) return true;
    const http = context.switchToHttp();
    const verdict = gate(http.getRequest(), http.getResponse());
    // Refused: the reply is sent (or the client left). Nest has no "stop without an exception"
    // for guards — `false` would become a 403 its exception filters then try to send — so the
    // pipeline is left waiting, as a middleware that never calls `next()` leaves Express's. Each
    // request gets its own promise that never settles: nothing holds it, so it is collected with
    // the request (one shared promise would keep every waiting request alive).
    if (verdict === false) return new Promise<boolean>(() => undefined);
    if (verdict === true) return true;
    return verdict.then((pass) => pass || new Promise<boolean>(() => undefined));
  }

  /** The limits of a route: its own decorator's, else its controller's, else the module's. */
  #limitsOf(handler: object, controller: object): Gate | undefined {
    // Both are functions (a method, a class): Reflector reads the metadata Nest's decorators set on them.
    const targets = [handler, controller] as Array<Type<unknown>>;
    const metadata = this.reflector.getAllAndOverride<RateLimitMetadata | undefined, string>(
      RATE_LIMIT_METADATA,
      targets,
    );
    if (metadata === undefined) return this.#everyRoute;
    if (metadata === false) return undefined;
    let gate = this.#routes.get(metadata);
    if (gate === undefined) {
      const own =
        this.reflector.get<RateLimitMetadata | undefined, string>(
          RATE_LIMIT_METADATA,
          targets[0] as Type<unknown>,
        ) === metadata;
      const className = (controller as { name?: string }).name ?? 'controller';
      const scope = own ? `${className}.${(handler as { name?: string }).name ?? 'handler'}` : className;
      gate = this.#gate(this.#routeOptions(metadata.limits as RouteOptions<unknown, unknown>, scope));
      this.#routes.set(metadata, gate);
    }
    return gate;
  }

  /** A decorator's options over the module's defaults, if one object, with their own buckets (`prefix`). */
  #routeOptions(
    limits: RouteOptions<unknown, unknown> | ReadonlyArray<RouteOptions<unknown, unknown>>,
    scope: string,
  ): Limits | Limits[] {
    const defaults = this.#defaults;
    const own = (options: RouteOptions<unknown, unknown>): Limits =>
      scopedOptions(defaults ?? {}, options, scope);
    return Array.isArray(limits) ? limits.map(own) : own(limits as RouteOptions<unknown, unknown>);
  }

  #gate(options: Limits | readonly Limits[]): Gate {
    const limits = createHttpLimiter<unknown, Fallback>(options);
    return (request, response) => {
      // Chosen once: at start, or at the first request if the guard was never initialized.
      const platform = (this.#platform ??= platformOf(this.adapterHost.httpAdapter.getType()));
      const http = platform.http(request);
      const apply = (outcome: HttpOutcome<Fallback>): Verdict => platform.apply(request, response, outcome);
      const outcome = limits.decideSync(request, http);
      return outcome !== undefined ? apply(outcome) : limits.decide(request, http).then(apply);
    };
  }
}
