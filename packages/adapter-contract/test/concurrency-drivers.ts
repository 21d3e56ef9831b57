import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as sluiceExpress from '@sluice/express';
import sluiceFastify, * as sluiceFastifyNamed from '@sluice/fastify';
import * as sluiceKoa from '@sluice/koa';
import express5, { type NextFunction, type Request, type Response } from 'express';
import express4 from 'express4';
import fastify5, { type FastifyInstance, type FastifyReply } from 'fastify';
import fastify4 from 'fastify4';
import Koa3, { type Context } from 'koa';
import Koa2 from 'koa2';
import type { ContractOptions, TestApp } from './drivers';

/**
 * What a route's handler does before it answers `{"ok":true}`, by path: resolve at once, wait,
 * never settle, or throw (the framework then answers 500); a string it gives is the body
 * instead (`text/plain`). Counted in `handled` once it answers.
 */
export type Work = (path: string) => void | string | Promise<void | string>;

/**
 * The limits in front of the route: a concurrency limit (or, when `adaptive` is given, an
 * adaptive limit instead), and optionally a rate limit before it.
 */
export interface ConcurrencyLimits {
  readonly concurrency?: ContractOptions;
  readonly adaptive?: ContractOptions;
  readonly rate?: ContractOptions;
}

/** One framework major, serving `work` behind `concurrencyLimit` (and `rateLimit`). */
export interface ConcurrencyDriver {
  readonly name: string;
  serve(limits: ConcurrencyLimits, work: Work): Promise<TestApp>;
  /** A fallback handler in the framework's terms: replies `status` with `{ fallback: true, inFlight }`. */
  fallbackHandler(status: number): unknown;
}

const OK = { ok: true };

async function listening(
  server: ReturnType<typeof createServer>,
  state: { handled: number },
): Promise<TestApp> {
  await new Promise<void>((resolve) => server.listen(0, resolve));
  return Object.assign(state, {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

function expressDriver(name: string, express: typeof express5): ConcurrencyDriver {
  const { adaptiveLimit, concurrencyLimit, rateLimit } = sluiceExpress;
  return {
    name,
    async serve({ concurrency, adaptive, rate }, work) {
      const app = express();
      app.set('env', 'test'); // the default error handler answers 500 without printing the stack
      const state = { handled: 0 };
      const route: Array<(req: Request, res: Response, next: NextFunction) => void> = [];
      if (rate !== undefined) route.push(rateLimit(rate as never));
      route.push(
        adaptive === undefined ? concurrencyLimit(concurrency as never) : adaptiveLimit(adaptive as never),
      );
      app.use(...route, (req: Request, res: Response, next: NextFunction) => {
        Promise.resolve()
          .then(() => work(req.path))
          .then((body) => {
            state.handled++;
            if (typeof body === 'string') res.type('text').send(body);
            else res.json(OK);
          }, next);
      });
      return listening(createServer(app), state);
    },
    fallbackHandler: (status) => (_req: Request, res: Response, d: { inFlight: number }) =>
      res.status(status).json({ fallback: true, inFlight: d.inFlight }),
  };
}

function koaDriver(name: string, Koa: typeof Koa3): ConcurrencyDriver {
  const { adaptiveLimit, concurrencyLimit, rateLimit } = sluiceKoa;
  return {
    name,
    async serve({ concurrency, adaptive, rate }, work) {
      const app = new Koa();
      app.silent = true; // the throwing handler's 500 is expected
      const state = { handled: 0 };
      if (rate !== undefined) app.use(rateLimit(rate as never));
      app.use(
        adaptive === undefined ? concurrencyLimit(concurrency as never) : adaptiveLimit(adaptive as never),
      );
      app.use(async (ctx) => {
        const body = await work(ctx.path);
        state.handled++;
        ctx.body = body ?? OK;
      });
      return listening(createServer(app.callback()), state);
    },
    fallbackHandler: (status) => (ctx: Context, d: { inFlight: number }) => {
      ctx.status = status;
      ctx.body = { fallback: true, inFlight: d.inFlight };
    },
  };
}

function fastifyDriver(name: string, fastify: typeof fastify5): ConcurrencyDriver {
  const { adaptiveLimit, concurrencyLimit } = sluiceFastifyNamed;
  return {
    name,
    async serve({ concurrency, adaptive, rate }, work) {
      const app: FastifyInstance = fastify();
      const state = { handled: 0 };
      // The plugin limits in `onRequest`; the concurrency hook in `preHandler` runs after it, so a
      // request the rate limit refuses never takes a permit.
      if (rate !== undefined) await app.register(sluiceFastify, rate as never);
      const preHandler =
        adaptive === undefined ? concurrencyLimit(concurrency as never) : adaptiveLimit(adaptive as never);
      app.all('*', { preHandler }, async (request) => {
        const body = await work(new URL(request.url, 'http://x').pathname);
        state.handled++;
        return body ?? OK;
      });
      await app.listen({ port: 0, host: '::' });
      return Object.assign(state, {
        server: app.server,
        url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
        close: async () => {
          app.server.closeAllConnections();
          await app.close();
        },
      });
    },
    fallbackHandler: (status) => (_request: unknown, reply: FastifyReply, d: { inFlight: number }) =>
      reply.code(status).send({ fallback: true, inFlight: d.inFlight }),
  };
}

/** Both supported majors of each framework. */
export const CONCURRENCY_DRIVERS: ConcurrencyDriver[] = [
  expressDriver('express 5', express5),
  expressDriver('express 4', express4 as unknown as typeof express5),
  koaDriver('koa 3', Koa3),
  koaDriver('koa 2', Koa2 as unknown as typeof Koa3),
  fastifyDriver('fastify 5', fastify5),
  fastifyDriver('fastify 4', fastify4 as unknown as typeof fastify5),
];
