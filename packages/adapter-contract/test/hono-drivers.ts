import { createServer } from 'node:http';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { type Decision } from '@sluice/core';
import { socketPeerAddress } from '@sluice/core/adapter';
import * as sluiceHono from '@sluice/hono';
import { Hono, type Context } from 'hono';
import type { ConcurrencyDriver } from './concurrency-drivers';
import { closed, failing, listen, outcomeOf, writePartial } from './driver-helpers';
import { CUSTOM_NOT_FOUND, HANDLER_ERROR, OK, type AdapterDriver, type ContractOptions } from './drivers';

type Env = { Bindings: HttpBindings };

/** A Hono app as the tests run it: a failure the test expects answers 500 without a printed stack. */
function honoApp(): Hono<Env> {
  const app = new Hono<Env>();
  app.onError((_error, c) => c.text('Internal Server Error', 500));
  return app;
}

/** Serves a Fetch handler on Node's own server through `@hono/node-server`, as production does. */
function serveFetch(
  fetch: (request: Request, env: HttpBindings) => Response | Promise<Response>,
  server = {},
) {
  return createServer(server, getRequestListener(fetch as never));
}

/**
 * Hono 4 on `@hono/node-server`: limits as `app.use` middleware, or (the `decorator` mount) on the
 * route itself, before its handler (`app.all('*', rateLimit(…), handler)`).
 */
export function honoDriver(): AdapterDriver {
  const { rateLimit } = sluiceHono;
  type Options = sluiceHono.RateLimitOptions;
  return {
    name: 'hono 4',
    async serve(options, mount = 'middleware', server = {}) {
      const app = honoApp();
      const state = { handled: 0 };
      const limit = rateLimit(options as unknown as Options | Options[]);
      const handle = (c: Context) => {
        state.handled++;
        return c.json(OK);
      };
      if (mount === 'middleware') app.use(limit).all('*', handle);
      else app.all('*', limit, handle);
      return listen(serveFetch(app.fetch, server), state);
    },
    async serveRoute(pattern, options, prefix = '') {
      const app = honoApp();
      const routes = new Hono<Env>();
      const state = { handled: 0 };
      routes.get(pattern, rateLimit(options as unknown as Options), (c) => {
        state.handled++;
        return c.json(OK);
      });
      app.route(prefix === '' ? '/' : prefix, routes);
      return listen(serveFetch(app.fetch), state);
    },
    async serveSite(options, customNotFound = false) {
      const app = honoApp();
      const state = { handled: 0 };
      const ok = (c: Context) => {
        state.handled++;
        return c.json(OK);
      };
      app.get('/health', ok);
      app.use(rateLimit(options as unknown as Options));
      app.get('/known', ok);
      if (customNotFound)
        app.notFound((c) => {
          state.handled++;
          return c.json(CUSTOM_NOT_FOUND, 404);
        });
      return listen(serveFetch(app.fetch), state);
    },
    async serveOutcomes(options, on = 'app') {
      const app = honoApp();
      const state = { handled: 0 };
      const limit = rateLimit(options as unknown as Options | Options[]);
      const handle = async (c: Context<Env>) => {
        state.handled++;
        const outcome = outcomeOf(c.req.url);
        if (outcome === 'throw') throw new Error(HANDLER_ERROR);
        if (outcome === 'hang') await closed(c.env.outgoing);
        return outcome === 'fail' ? c.json({ ok: false }, 401) : c.json(OK);
      };
      if (on === 'app') app.use(limit).all('*', handle);
      else app.all('*', limit, handle);
      return listen(serveFetch(app.fetch), state);
    },
    countStatus: (status) => (c: Context, response: Context) => c === response && c.res.status === status,
    fallbackHandler: (status) => (c: Context, d: Decision) =>
      c.json({ handled: true, remaining: d.remaining }, status as 200),
    failingFallback: (how) => (c: Context<Env>) =>
      failing(how, {
        headers: () => {
          c.status(203);
          c.header('X-Cache', 'HIT');
        },
        midReply: () => writePartial(c.env.outgoing),
      }),
    keyFromHeader: (header) => (c: Context) => c.req.header(header),
    // As the app reads the argument: one value as is, a repeated one as Hono's array of them.
    keyFromQuery: (name) => (c: Context) => {
      const values = c.req.queries(name);
      return values?.length === 1 ? values[0] : values;
    },
    tierOverrides: (name, rate) => (_key: string, c: Context) =>
      c.req.header(name) === 'gold' ? rate : undefined,
  };
}

/** The client address of a Fetch handler on `@hono/node-server`: its connection's peer. */
const peer = (_request: Request, env: HttpBindings) => socketPeerAddress(env.incoming.socket);

/**
 * A bare Fetch handler behind `withRateLimit`, served by `@hono/node-server` (both mounts alike:
 * there is one way to wrap a handler); its client address from `clientAddress`. A Fetch handler
 * has no router and no raw response: `serveRoute` and a fallback that writes on one are not its.
 */
export function fetchDriver(): AdapterDriver {
  const { withRateLimit } = sluiceHono;
  return {
    name: 'fetch handler',
    async serve(options, _mount, server = {}) {
      const state = { handled: 0 };
      const list = (Array.isArray(options) ? options : [options]) as ContractOptions[];
      const [first, ...rest] = list;
      const limits = [{ clientAddress: peer, ...first }, ...rest];
      const handler = withRateLimit(
        (Array.isArray(options) ? limits : limits[0]) as never,
        async (_request: Request, _env: HttpBindings) => {
          state.handled++;
          return Response.json(OK);
        },
      );
      return listen(serveFetch(handler, server), state);
    },
    serveRoute: () => Promise.reject(new Error('a Fetch handler has no routes')),
    // The handler routes by itself: /health before the limit, the rest behind it.
    async serveSite(options, customNotFound = false) {
      const state = { handled: 0 };
      const ok = () => {
        state.handled++;
        return Response.json(OK);
      };
      const limited = withRateLimit(
        { clientAddress: peer, ...options } as never,
        async (request: Request, _env: HttpBindings) => {
          if (new URL(request.url).pathname === '/known') return ok();
          if (!customNotFound) return new Response('Not Found', { status: 404 });
          state.handled++;
          return Response.json(CUSTOM_NOT_FOUND, { status: 404 });
        },
      );
      const handler = (request: Request, env: HttpBindings) =>
        new URL(request.url).pathname === '/health' ? ok() : limited(request, env);
      return listen(serveFetch(handler), state);
    },
    async serveOutcomes(options) {
      const state = { handled: 0 };
      const list = (Array.isArray(options) ? options : [options]) as ContractOptions[];
      const [first, ...rest] = list;
      const limits = [{ clientAddress: peer, ...first }, ...rest];
      const handler = withRateLimit(
        (Array.isArray(options) ? limits : limits[0]) as never,
        async (request: Request, env: HttpBindings) => {
          state.handled++;
          const outcome = outcomeOf(request.url);
          if (outcome === 'throw') throw new Error(HANDLER_ERROR);
          if (outcome === 'hang') await closed(env.outgoing);
          return Response.json(outcome === 'fail' ? { ok: false } : OK, {
            status: outcome === 'fail' ? 401 : 200,
          });
        },
      );
      // @hono/node-server answers a handler that threw with a 500, as a framework would.
      const served = (request: Request, env: HttpBindings) =>
        handler(request, env).catch(() => new Response(null, { status: 500 }));
      return listen(serveFetch(served), state);
    },
    countStatus: (status) => (_request: Request, response: Response | undefined) =>
      response?.status === status,
    rawResponse: false,
    fallbackHandler: (status) => (_request: Request, d: Decision) =>
      Response.json({ handled: true, remaining: d.remaining }, { status }),
    failingFallback: (how) => () => failing(how, { headers: () => undefined, midReply: () => undefined }),
    keyFromHeader: (header) => (request: Request) => request.headers.get(header) ?? undefined,
    keyFromQuery: (name) => (request: Request) => {
      const values = new URL(request.url).searchParams.getAll(name);
      return values.length === 1 ? values[0] : values.length === 0 ? undefined : values;
    },
    tierOverrides: (name, rate) => (_key: string, request: Request) =>
      request.headers.get(name) === 'gold' ? rate : undefined,
  };
}

/** `concurrencyLimit` on Hono 4 (`@hono/node-server`), after `rateLimit` when there is one. */
export function honoConcurrencyDriver(): ConcurrencyDriver {
  const { adaptiveLimit, concurrencyLimit, rateLimit } = sluiceHono;
  return {
    name: 'hono 4',
    async serve({ concurrency, adaptive, rate }, work) {
      const app = honoApp();
      const state = { handled: 0 };
      if (rate !== undefined) app.use(rateLimit(rate as never));
      app.use(
        adaptive === undefined ? concurrencyLimit(concurrency as never) : adaptiveLimit(adaptive as never),
      );
      app.all('*', async (c) => {
        const body = await work(c.req.path);
        state.handled++;
        return typeof body === 'string' ? c.text(body) : c.json(OK);
      });
      return listen(serveFetch(app.fetch), state);
    },
    fallbackHandler: (status) => (c: Context, d: { inFlight: number }) =>
      c.json({ fallback: true, inFlight: d.inFlight }, status as 200),
  };
}

/** Hono 4 on `@hono/node-server`. */
export const HONO_DRIVER = honoDriver();
/** A bare Fetch handler behind `withRateLimit` on `@hono/node-server`: no routes. */
export const FETCH_DRIVER = fetchDriver();
/** Hono, and a bare Fetch handler. */
export const HONO_DRIVERS: AdapterDriver[] = [HONO_DRIVER, FETCH_DRIVER];

/** A bare Fetch handler behind `withAdaptiveLimit` on `@hono/node-server` (only `adaptive` limits). */
export function fetchAdaptiveDriver(): ConcurrencyDriver {
  const { withAdaptiveLimit } = sluiceHono;
  return {
    name: 'fetch handler',
    async serve({ adaptive }, work) {
      const state = { handled: 0 };
      const handler = withAdaptiveLimit(adaptive as never, async (request: Request, _env: HttpBindings) => {
        let body: void | string;
        try {
          body = await work(new URL(request.url).pathname);
        } catch {
          return new Response('Internal Server Error', { status: 500 });
        }
        state.handled++;
        return typeof body === 'string' ? new Response(body) : Response.json(OK);
      });
      return listen(serveFetch(handler), state);
    },
    fallbackHandler: (status) => (_request: Request, d: { inFlight: number }) =>
      Response.json({ fallback: true, inFlight: d.inFlight }, { status }),
  };
}
