import type { Server } from 'node:http';

/**
 * Options as the contract writes them: framework-neutral, except the values built by a driver
 * (`fallbackHandler`, `keyFromHeader`), which each driver casts to its framework's types.
 */
export type ContractOptions = Record<string, unknown>;

/** A running app: `handled` counts the requests that reached the route handler. */
export interface TestApp {
  readonly server: Server;
  readonly url: string;
  handled: number;
  close(): Promise<void>;
}

/** How the limits are put in front of the handler. */
export type Mount = 'middleware' | 'decorator';

/** Both ways an adapter limits a route: as middleware (or plugin) and as a decorator. */
export const MOUNTS: readonly Mount[] = ['middleware', 'decorator'];

/** Options of the Node HTTP server under the framework (`maxHeaderSize` to send 1 MB keys). */
export interface ServerSettings {
  readonly maxHeaderSize?: number;
}

/**
 * How a broken fallback handler fails: `throw` at once, `reject` (async), `throw-after-headers`
 * (status and an `X-Cache` header set, nothing sent), `throw-mid-reply` (200 and `partial` written
 * on the raw response, then the throw).
 */
export type FallbackFailure = 'throw' | 'reject' | 'throw-after-headers' | 'throw-mid-reply';

/** Express's routing settings for {@link AdapterDriver.serveRoute}. */
export interface RouteSettings {
  /** `case sensitive routing`: a mount path matches only as spelled. */
  readonly caseSensitive?: boolean;
  /** Further paths the router is mounted at, beside `prefix` (`app.use([prefix, ...], router)`). */
  readonly alsoAt?: readonly string[];
}

/** What the contract needs from one framework major. */
export interface AdapterDriver {
  readonly name: string;
  /** Serves every path with 200 `{"ok":true}` behind the limits; rejects with the adapter's error on invalid options. */
  serve(
    options: ContractOptions | ContractOptions[],
    mount?: Mount,
    server?: ServerSettings,
  ): Promise<TestApp>;
  /**
   * Serves one GET route, `pattern` (`/sku/:id`) under `prefix` (Express router mount, Koa router
   * prefix, Fastify plugin prefix), with the limits on the route itself: Express
   * `router.get(pattern, rateLimit(…), handler)`, Koa `@koa/router` likewise, Fastify
   * `config.rateLimit`. Other paths answer the framework's own 404. `settings`: Express only
   * (the others ignore them).
   */
  serveRoute(
    pattern: string,
    options: ContractOptions,
    prefix?: string,
    settings?: RouteSettings,
  ): Promise<TestApp>;
  /**
   * Serves a site whose every route is limited by `options` (Express and Koa `app.use`, the
   * Fastify plugin's options, Nest's module): `GET /known`, and `GET /health` exempt from the
   * limit (Express and Koa: mounted before it; Fastify `config: { rateLimit: false }`; Nest
   * `@SkipRateLimit()`), both answering 200 `{"ok":true}`. Any other path matches no route: the
   * framework's 404, or with `customNotFound` the app's own handler (404 `{"custom":true}`:
   * Express and Koa a last middleware, Fastify `setNotFoundHandler`, Nest an exception filter
   * of `NotFoundException`). `handled` counts what reached the routes and the custom handler.
   */
  serveSite(options: ContractOptions, customNotFound?: boolean): Promise<TestApp>;
  /**
   * Serves every path behind the limits (as `serve`'s middleware), its handler answering as the
   * query argument `outcome` says: `ok` 200 `{"ok":true}`, `fail` 401 (Nest: an
   * `UnauthorizedException`), `throw` throws (the framework's 500), `hang` answers nothing until
   * the client leaves. `handled` counts the requests that reached it. `route`: the limits on
   * the route itself instead (Express and Koa route middleware, Fastify `config.rateLimit`, Nest
   * `@RateLimit`, Hono route middleware; a Fetch handler has one way).
   */
  serveOutcomes(options: ContractOptions | ContractOptions[], on?: 'app' | 'route'): Promise<TestApp>;
  /** A `countWhen` function in the framework's terms: counts the responses of status `status`, read from its response. */
  countStatus(status: number): unknown;
  /** A fallback in the framework's own terms: replies `status` with `{ handled: true, remaining }`. */
  fallbackHandler(status: number): unknown;
  /** A fallback in the framework's own terms that fails as `how` says. */
  failingFallback(how: FallbackFailure): unknown;
  /** A key function reading one request header through the framework's request object. */
  keyFromHeader(name: string): unknown;
  /** A key function returning the framework's parsed query argument as is (an array when repeated). */
  keyFromQuery(name: string): unknown;
  /**
   * An `overrides` function giving `rate` to requests whose header `name` is `gold`, read through
   * what only the framework's own request has (Express `req.get`, Koa `ctx.get`, Fastify `request.raw`).
   */
  tierOverrides(name: string, rate: string): unknown;
  /**
   * `false` where a fallback handler has no raw response to begin a reply on (a bare Fetch
   * handler returns its `Response` whole): `failingFallback('throw-mid-reply')` is not its case.
   */
  readonly rawResponse?: false;
}

/** The error a failing fallback throws. */
export const FALLBACK_ERROR = 'fallback template missing';

/** What every route handler answers. */
export const OK = { ok: true };

/** What {@link AdapterDriver.serveOutcomes}' handler does: the query argument `outcome`. */
export type Outcome = 'ok' | 'fail' | 'throw' | 'hang';

/** The error a handler of `outcome=throw` throws. */
export const HANDLER_ERROR = 'handler failed';

/** The body of a site's own not-found handler (see {@link AdapterDriver.serveSite}). */
export const CUSTOM_NOT_FOUND = { custom: true };
