import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Decision } from '@sluice/core';
import * as sluiceExpress from '@sluice/express';
import sluiceFastify, * as sluiceFastifyNamed from '@sluice/fastify';
import * as sluiceKoa from '@sluice/koa';
import express5 from 'express';
import express4 from 'express4';
import type { NextFunction, Request, Response } from 'express';
import fastify5, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fastify4 from 'fastify4';
import Router from '@koa/router';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import type { Context, Next } from 'koa';

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

/** Fails as `how` says, once `begin` has set what a handler sets before failing (status, headers or partial body). */
async function fail(how: FallbackFailure, begin: { headers(): void; midReply(): void }): Promise<never> {
  if (how === 'reject') await Promise.resolve();
  if (how === 'throw-after-headers') begin.headers();
  if (how === 'throw-mid-reply') begin.midReply();
  throw new Error(FALLBACK_ERROR);
}

/** The synchronous throw of `throw`, else the promise of {@link fail}. */
export function failing(how: FallbackFailure, begin: { headers(): void; midReply(): void }): unknown {
  if (how === 'throw') throw new Error(FALLBACK_ERROR);
  return fail(how, begin);
}

/** Writes 200 and `partial` on a raw response, as a handler streaming its reply would. */
export function writePartial(raw: ServerResponse): void {
  raw.writeHead(200, { 'Content-Type': 'text/plain' });
  raw.write('partial');
}

/** What every route handler answers. */
export const OK = { ok: true };

/** What {@link AdapterDriver.serveOutcomes}' handler does: the query argument `outcome`. */
export type Outcome = 'ok' | 'fail' | 'throw' | 'hang';

/** The error a handler of `outcome=throw` throws. */
export const HANDLER_ERROR = 'handler failed';

/** The outcome a request asks for (`?outcome=`), `ok` by default. */
export function outcomeOf(url: string | undefined): Outcome {
  const asked = new URL(url ?? '/', 'http://sluice.test').searchParams.get('outcome');
  return asked === 'fail' || asked === 'throw' || asked === 'hang' ? asked : 'ok';
}

/** Resolves when `raw` (Node's response) closes: a `hang` handler waits for its client to leave. */
export function closed(raw: ServerResponse): Promise<void> {
  return new Promise((resolve) => raw.once('close', () => resolve()));
}
/** The body of a site's own not-found handler (see {@link AdapterDriver.serveSite}). */
export const CUSTOM_NOT_FOUND = { custom: true };

/** Listens on an ephemeral port and completes the app: its URL, and `close`. */
export async function listen(
  server: Server,
  app: Omit<TestApp, 'server' | 'url' | 'close'>,
  close?: () => Promise<void>,
): Promise<TestApp> {
  // The default dual-stack address: IPv4 clients appear as ::ffff:127.0.0.1, as in production.
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(app, {
    server,
    // 127.0.0.1, not localhost: the client address is then known (localhost may resolve to ::1).
    url: `http://127.0.0.1:${port}`,
    close:
      close ??
      (() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        })),
  });
}

function expressDriver(name: string, express: typeof express5): AdapterDriver {
  const { rateLimit, RateLimit } = sluiceExpress;
  type Options = sluiceExpress.RateLimitOptions;
  return {
    name,
    async serve(options, mount = 'middleware', server = {}) {
      const app = express();
      const state = { handled: 0 };
      const limits = options as unknown as Options | Options[];
      if (mount === 'middleware') {
        app.use(rateLimit(limits));
        app.use((_req: Request, res: Response) => {
          state.handled++;
          res.json(OK);
        });
      } else {
        class Controller {
          @RateLimit(limits)
          handle(_req: Request, res: Response, _next: NextFunction): void {
            state.handled++;
            res.json(OK);
          }
        }
        const controller = new Controller();
        app.use((req: Request, res: Response, next: NextFunction) => controller.handle(req, res, next));
      }
      return listen(createServer(server, app), state);
    },
    async serveRoute(pattern, options, prefix = '/', settings = {}) {
      const app = express();
      if (settings.caseSensitive === true) app.enable('case sensitive routing');
      const state = { handled: 0 };
      const router = express.Router();
      router.get(pattern, rateLimit(options as unknown as Options), (_req: Request, res: Response) => {
        state.handled++;
        res.json(OK);
      });
      if (settings.alsoAt === undefined) app.use(prefix, router);
      else app.use([prefix, ...settings.alsoAt], router);
      return listen(createServer(app), state);
    },
    async serveSite(options, customNotFound = false) {
      const app = express();
      const state = { handled: 0 };
      const ok = (_req: Request, res: Response) => {
        state.handled++;
        res.json(OK);
      };
      app.get('/health', ok);
      app.use(rateLimit(options as unknown as Options));
      app.get('/known', ok);
      if (customNotFound)
        app.use((_req: Request, res: Response) => {
          state.handled++;
          res.status(404).json(CUSTOM_NOT_FOUND);
        });
      return listen(createServer(app), state);
    },
    async serveOutcomes(options, on = 'app') {
      const app = express();
      const state = { handled: 0 };
      const limit = rateLimit(options as unknown as Options | Options[]);
      if (on === 'app') app.use(limit);
      app.all(/.*/, ...(on === 'route' ? [limit] : []), (req: Request, res: Response) => {
        state.handled++;
        const outcome = outcomeOf(req.url);
        if (outcome === 'throw') throw new Error(HANDLER_ERROR);
        if (outcome === 'fail') res.status(401).json({ ok: false });
        else if (outcome === 'ok') res.json(OK);
      });
      // Express's own 500, without its printed stack.
      app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
        res.status(500).end();
      });
      return listen(createServer(app), state);
    },
    countStatus: (status) => (_req: Request, res: Response) => res.statusCode === status,
    fallbackHandler: (status) => (_req: Request, res: Response, d: Decision) =>
      res.status(status).json({ handled: true, remaining: d.remaining }),
    failingFallback: (how) => (_req: Request, res: Response) =>
      failing(how, {
        headers: () => res.status(203).set('X-Cache', 'HIT'),
        midReply: () => writePartial(res),
      }),
    keyFromHeader: (header) => (req: Request) => req.headers[header] as string | undefined,
    keyFromQuery: (name) => (req: Request) => req.query[name],
    tierOverrides: (name, rate) => (_key: string, req: Request) =>
      req.get(name) === 'gold' ? rate : undefined,
  };
}

function koaDriver(name: string, Koa: typeof Koa3): AdapterDriver {
  const { rateLimit, RateLimit } = sluiceKoa;
  type Options = sluiceKoa.RateLimitOptions;
  return {
    name,
    async serve(options, mount = 'middleware', server = {}) {
      const app = new Koa();
      app.silent = true; // the error test expects a 500; Koa would also print it
      const state = { handled: 0 };
      const limits = options as unknown as Options | Options[];
      if (mount === 'middleware') {
        app.use(rateLimit(limits));
        app.use((ctx) => {
          state.handled++;
          ctx.body = OK;
        });
      } else {
        class Controller {
          @RateLimit(limits)
          handle(ctx: Context, _next: Next): void {
            state.handled++;
            ctx.body = OK;
          }
        }
        const controller = new Controller();
        app.use((ctx, next) => controller.handle(ctx, next));
      }
      return listen(createServer(server, app.callback()), state);
    },
    async serveRoute(pattern, options, prefix = '') {
      const app = new Koa();
      app.silent = true;
      const state = { handled: 0 };
      const router = new Router({ prefix });
      router.get(pattern, rateLimit(options as unknown as Options), (ctx) => {
        state.handled++;
        ctx.body = OK;
      });
      app.use(router.routes());
      return listen(createServer(app.callback()), state);
    },
    async serveSite(options, customNotFound = false) {
      const app = new Koa();
      app.silent = true;
      const state = { handled: 0 };
      const ok = (ctx: Context) => {
        state.handled++;
        ctx.body = OK;
      };
      const health = new Router();
      health.get('/health', ok);
      const known = new Router();
      known.get('/known', ok);
      app.use(health.routes());
      app.use(rateLimit(options as unknown as Options));
      app.use(known.routes());
      if (customNotFound)
        app.use((ctx) => {
          state.handled++;
          ctx.status = 404;
          ctx.body = CUSTOM_NOT_FOUND;
        });
      return listen(createServer(app.callback()), state);
    },
    async serveOutcomes(options, on = 'app') {
      const app = new Koa();
      app.silent = true;
      const state = { handled: 0 };
      const limit = rateLimit(options as unknown as Options | Options[]);
      const handle = async (ctx: Context): Promise<void> => {
        state.handled++;
        const outcome = outcomeOf(ctx.url);
        if (outcome === 'throw') throw new Error(HANDLER_ERROR);
        if (outcome === 'hang') return closed(ctx.res);
        ctx.status = outcome === 'fail' ? 401 : 200;
        ctx.body = outcome === 'fail' ? { ok: false } : OK;
      };
      if (on === 'app') {
        app.use(limit);
        app.use(handle);
      } else {
        const router = new Router();
        router.get('/', limit, handle);
        app.use(router.routes());
      }
      return listen(createServer(app.callback()), state);
    },
    countStatus: (status) => (ctx: Context, response: Context) => ctx === response && ctx.status === status,
    fallbackHandler: (status) => (ctx: Context, d: Decision) => {
      ctx.status = status;
      ctx.body = { handled: true, remaining: d.remaining };
    },
    failingFallback: (how) => (ctx: Context) =>
      failing(how, {
        headers: () => {
          ctx.status = 203;
          ctx.set('X-Cache', 'HIT');
        },
        midReply: () => writePartial(ctx.res),
      }),
    keyFromHeader: (header) => (ctx: Context) => ctx.get(header),
    keyFromQuery: (name) => (ctx: Context) => ctx.query[name],
    tierOverrides: (name, rate) => (_key: string, ctx: Context) =>
      ctx.get(name) === 'gold' ? rate : undefined,
  };
}

function fastifyDriver(name: string, fastify: typeof fastify5): AdapterDriver {
  const { RateLimit } = sluiceFastifyNamed;
  type Options = Parameters<typeof RateLimit>[0];
  return {
    name,
    async serve(options, mount = 'middleware', server = {}) {
      const app: FastifyInstance = fastify({ http: server });
      const state = { handled: 0 };
      if (mount === 'middleware') {
        if (Array.isArray(options)) {
          // Several limits: the plugin without a rate, the limits on the route.
          await app.register(sluiceFastify);
          app.all('*', { config: { rateLimit: options as never } }, async () => {
            state.handled++;
            return OK;
          });
        } else {
          await app.register(sluiceFastify, options as never);
          app.all('*', async () => {
            state.handled++;
            return OK;
          });
        }
      } else {
        class Controller {
          @RateLimit(options as unknown as Options)
          async handle(_request: FastifyRequest, _reply: FastifyReply): Promise<unknown> {
            state.handled++;
            return OK;
          }
        }
        const controller = new Controller();
        app.all('*', (request, reply) => controller.handle(request, reply));
      }
      await app.listen({ port: 0, host: '::' });
      return listen(app.server, state, () => app.close());
    },
    async serveRoute(pattern, options, prefix = '') {
      const app: FastifyInstance = fastify();
      const state = { handled: 0 };
      await app.register(sluiceFastify);
      await app.register(
        async (scope) => {
          scope.get(pattern, { config: { rateLimit: options as never } }, async () => {
            state.handled++;
            return OK;
          });
        },
        { prefix },
      );
      await app.listen({ port: 0, host: '::' });
      return listen(app.server, state, () => app.close());
    },
    async serveSite(options, customNotFound = false) {
      const app: FastifyInstance = fastify();
      const state = { handled: 0 };
      await app.register(sluiceFastify, options as never);
      const ok = async () => {
        state.handled++;
        return OK;
      };
      app.get('/known', ok);
      app.get('/health', { config: { rateLimit: false } }, ok);
      if (customNotFound)
        app.setNotFoundHandler(async (_request, reply) => {
          state.handled++;
          return reply.code(404).send(CUSTOM_NOT_FOUND);
        });
      await app.listen({ port: 0, host: '::' });
      return listen(app.server, state, () => app.close());
    },
    async serveOutcomes(options, on = 'app') {
      const app: FastifyInstance = fastify();
      const state = { handled: 0 };
      const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
        state.handled++;
        const outcome = outcomeOf(request.url);
        if (outcome === 'throw') throw new Error(HANDLER_ERROR);
        if (outcome === 'hang') {
          await closed(reply.raw);
          return reply;
        }
        if (outcome === 'fail') return reply.code(401).send({ ok: false });
        return OK;
      };
      if (Array.isArray(options) || on === 'route') {
        await app.register(sluiceFastify);
        app.all('*', { config: { rateLimit: options as never } }, handler);
      } else {
        await app.register(sluiceFastify, options as never);
        app.all('*', handler);
      }
      await app.listen({ port: 0, host: '::' });
      return listen(app.server, state, () => app.close());
    },
    countStatus: (status) => (_request: FastifyRequest, reply: FastifyReply) => reply.statusCode === status,
    fallbackHandler: (status) => (_request: FastifyRequest, reply: FastifyReply, d: Decision) =>
      reply.code(status).send({ handled: true, remaining: d.remaining }),
    failingFallback: (how) => (_request: FastifyRequest, reply: FastifyReply) =>
      failing(how, {
        headers: () => reply.code(203).header('X-Cache', 'HIT'),
        midReply: () => writePartial(reply.raw),
      }),
    keyFromHeader: (header) => (request: FastifyRequest) => request.headers[header] as string | undefined,
    keyFromQuery: (name) => (request: FastifyRequest) => (request.query as Record<string, unknown>)[name],
    tierOverrides: (name, rate) => (_key: string, request: FastifyRequest) =>
      request.raw.headers[name] === 'gold' ? rate : undefined,
  };
}

/** Both supported majors of each framework. */
export const DRIVERS: AdapterDriver[] = [
  expressDriver('express 5', express5),
  expressDriver('express 4', express4 as unknown as typeof express5),
  koaDriver('koa 3', Koa3),
  koaDriver('koa 2', Koa2 as unknown as typeof Koa3),
  fastifyDriver('fastify 5', fastify5),
  fastifyDriver('fastify 4', fastify4 as unknown as typeof fastify5),
];
