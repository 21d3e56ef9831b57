import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fastifyRateLimit from '@fastify/rate-limit';
import { getRequestListener } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { createConcurrencyLimiter, MemoryStore, RedisStore, type ConcurrencyLimiter } from '@sluice/core';
import { concurrencyLimit as expressConcurrency, rateLimit as sluiceExpress } from '@sluice/express';
import sluiceFastify, { concurrencyLimit as fastifyConcurrency } from '@sluice/fastify';
import { concurrencyLimit as honoConcurrency, rateLimit as sluiceHono } from '@sluice/hono';
import { concurrencyLimit as koaConcurrency, rateLimit as sluiceKoa } from '@sluice/koa';
import { prometheus } from '@sluice/metrics';
import express, { type RequestHandler } from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import { Hono, type MiddlewareHandler } from 'hono';
import {
  rateLimiter as honoRateLimiter,
  RedisStore as HonoRedisStore,
  type RedisClient as HonoRedisClient,
} from 'hono-rate-limiter';
import type Redis from 'ioredis';
import { redisRoundTrip } from './round-trip';
import Koa, { type Middleware } from 'koa';
import koaRateLimit from 'koa-ratelimit';
import { Registry } from 'prom-client';
import { RedisStore as RateLimitRedisStore, type RedisReply } from 'rate-limit-redis';
import { countedLimiter, SHARED_STORE_TIMEOUT_MS } from '../sluice-limiter';
import { ADMIT_ALL, WINDOW_MS } from '../limits';

export const FRAMEWORKS = ['express', 'koa', 'fastify', 'hono'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** The frameworks the metrics section measures, and the batching goals judge. */
export const METRICS_FRAMEWORKS: readonly Framework[] = ['express', 'koa', 'fastify'];

/** How the report names sluice's limit with `countWhen: 'failed'` (see {@link Variant}). */
export const COUNT_WHEN_LIMITER = "sluice, countWhen: 'failed'";

/** How the report names sluice's concurrency limit. */
export const CONCURRENCY_LIMITER = 'sluice concurrencyLimit';

/** How the report names the floor variant: one batched Redis call per request, no limiter. */
export const FLOOR_LIMITER = 'floor: one batched Redis call';

/** How the report names the calibration variant: a middleware that only passes the request on. */
export const NOOP_LIMITER = 'no-op middleware';

/** The limiter each framework's users reach for, named in the report. */
export const USUAL_LIMITER: Record<Framework, { memory: string; redis: string }> = {
  express: { memory: 'express-rate-limit', redis: 'express-rate-limit + rate-limit-redis' },
  koa: { memory: 'koa-ratelimit (memory)', redis: 'koa-ratelimit (redis)' },
  fastify: { memory: '@fastify/rate-limit', redis: '@fastify/rate-limit (redis)' },
  hono: { memory: 'hono-rate-limiter', redis: 'hono-rate-limiter + its RedisStore' },
};

/** One limited variant of the app: who limits, with which store, on which path. */
export interface Variant {
  /**
   * sluice's `rateLimit`, the framework's usual limiter, or sluice's `concurrencyLimit`;
   * `sluice-metrics`: sluice reporting to `prometheus()` (the metrics section's comparison);
   * `noop`: a middleware (Fastify: an `onRequest` hook) that only passes the request on, no limiter;
   * `sluice-count-when`: sluice with `countWhen: 'failed'` on 200s, so every unit is given back
   * when the response closes (beside `sluice`, the same limit without it).
   */
  readonly limiter:
    | 'sluice'
    | 'sluice-metrics'
    | 'sluice-count-when'
    | 'usual'
    | 'concurrency'
    | 'noop'
    | 'floor-get'
    | 'floor-batch';
  readonly store: 'memory' | 'redis';
  /** `admitted`: the limit is never reached; `429`: the only client is over its limit. */
  readonly path: 'admitted' | '429';
}

/** `sluice:memory:admitted`, …; `bare` for the app without a limiter. */
export type VariantId = 'bare' | `${Variant['limiter']}:${Variant['store']}:${Variant['path']}`;

export const VARIANTS: readonly Variant[] = [
  // The calibration: what one more layer costs the framework, and how far a ratio that should be
  // 1 strays on this machine (every limiter's ratio includes both).
  { limiter: 'noop', store: 'memory', path: 'admitted' },
  ...(['sluice', 'usual'] as const).flatMap((limiter) =>
    (['memory', 'redis'] as const).flatMap((store) =>
      (['admitted', '429'] as const).map((path) => ({ limiter, store, path })),
    ),
  ),
  // The same limit as `sluice` with countWhen: 'failed' on 200s: each unit given back at the close.
  { limiter: 'sluice-count-when', store: 'memory', path: 'admitted' },
  // A permit per request, given back when the response closes; never refused (issue 17).
  { limiter: 'concurrency', store: 'memory', path: 'admitted' },
  { limiter: 'concurrency', store: 'redis', path: 'admitted' },
  // The floor sluice's Redis path is judged against: one batched Redis call per request, no limiter.
  { limiter: 'floor-batch', store: 'redis', path: 'admitted' },
];

/**
 * The floors of any Redis round trip per request, no limiter: `floor-batch` (in {@link VARIANTS},
 * the full run's: sluice's Redis path is judged against it) awaits one reply of a batched EVAL
 * (up to 64 requests a call, two calls on their way, full ones at once), as sluice's store
 * batches, without its limiter; `floor-get` (this list, `BENCH_FLOOR=1` in focus.ts) one ioredis
 * GET per request.
 */
export const FLOOR_VARIANTS: readonly Variant[] = [
  { limiter: 'floor-get', store: 'redis', path: 'admitted' },
];

/** The metrics section's pair: the in-memory admitted path without and with `metrics`. */
export const METRICS_VARIANTS: readonly Variant[] = (['sluice', 'sluice-metrics'] as const).map(
  (limiter) => ({
    limiter,
    store: 'memory',
    path: 'admitted',
  }),
);

export function variantId(variant: Variant): VariantId {
  return `${variant.limiter}:${variant.store}:${variant.path}`;
}

/** Per minute: never reached by a run (admitted), or reached by the first request (429). */
const LIMIT = { admitted: ADMIT_ALL, '429': 1 } as const;
const BODY = { hello: 'world' };

/** What the apps of one framework share. */
interface Context {
  readonly framework: Framework;
  readonly redis: Redis;
  /** Limiters of the sluice variants, for their store-error counts. */
  readonly counted: Map<VariantId, { withoutStore(): number }>;
}

/** Keys of each framework's variant apart in the shared Redis (limiters of one kind share a key layout). */
function prefixOf(variant: Variant, context: Context): string {
  return `bench-${context.framework}-${variantId(variant)}`;
}

/** More permits than a run ever has requests in flight: every request takes one and passes. */
const CONCURRENCY_MAX = 1_000_000;

/** The concurrency limiter of a variant, counting the acquires its store could not answer. */
function concurrencyLimiter(variant: Variant, context: Context): ConcurrencyLimiter {
  const limiter = createConcurrencyLimiter({
    max: CONCURRENCY_MAX,
    prefix: prefixOf(variant, context),
    ...(variant.store === 'memory'
      ? { store: new MemoryStore() }
      : { store: new RedisStore({ client: context.redis }), timeoutMs: SHARED_STORE_TIMEOUT_MS }),
  });
  let storeErrors = 0;
  limiter.on('storeError', () => storeErrors++);
  context.counted.set(variantId(variant), { withoutStore: () => storeErrors });
  return limiter;
}

function sluiceLimiter(variant: Variant, context: Context): ReturnType<typeof countedLimiter> {
  const id = variantId(variant);
  const counted = countedLimiter(
    {
      rate: variant.path === 'admitted' ? { limit: LIMIT.admitted, window: WINDOW_MS } : '1r/m',
      store: variant.store === 'memory' ? new MemoryStore() : new RedisStore({ client: context.redis }),
      prefix: prefixOf(variant, context),
      ...(variant.limiter === 'sluice-metrics'
        ? { name: 'bench', metrics: prometheus({ registry: new Registry() }) }
        : {}),
    },
    { shared: variant.store === 'redis' },
  );
  context.counted.set(id, counted);
  return counted;
}

/** What a sluice variant adds to its limiter: `countWhen: 'failed'` for `sluice-count-when`. */
function countWhenOf(variant: Variant): { countWhen?: 'failed' } {
  return variant.limiter === 'sluice-count-when' ? { countWhen: 'failed' } : {};
}

function expressMiddleware(variant: Variant, context: Context): RequestHandler {
  if (variant.limiter === 'noop') return (_req, _res, next) => next();
  if (variant.limiter === 'floor-get' || variant.limiter === 'floor-batch') {
    const call = floorCall(variant, context);
    return (_req, _res, next) => {
      void call().then(() => next());
    };
  }
  if (variant.limiter === 'concurrency')
    return expressConcurrency({ limiter: concurrencyLimiter(variant, context) });
  if (variant.limiter !== 'usual')
    return sluiceExpress({ limiter: sluiceLimiter(variant, context).limiter, ...countWhenOf(variant) });
  return expressRateLimit({
    windowMs: WINDOW_MS,
    limit: LIMIT[variant.path],
    ...(variant.store === 'redis'
      ? {
          store: new RateLimitRedisStore({
            sendCommand: (command: string, ...args: string[]) =>
              context.redis.call(command, ...args) as Promise<RedisReply>,
            prefix: `${prefixOf(variant, context)}:`,
          }),
        }
      : {}),
  });
}

/** One Redis round trip per call of the returned function, as a floor variant asks. */
function floorCall(variant: Variant, context: Context): () => Promise<unknown> {
  return redisRoundTrip(
    context.redis,
    `${prefixOf(variant, context)}:k`,
    variant.limiter === 'floor-get' ? 'get' : 'batch',
  );
}

function koaMiddleware(variant: Variant, context: Context): Middleware {
  if (variant.limiter === 'noop') return (_ctx, next) => next();
  if (variant.limiter === 'floor-get' || variant.limiter === 'floor-batch') {
    const call = floorCall(variant, context);
    return async (_ctx, next) => {
      await call();
      await next();
    };
  }
  if (variant.limiter === 'concurrency')
    return koaConcurrency({ limiter: concurrencyLimiter(variant, context) });
  if (variant.limiter !== 'usual')
    return sluiceKoa({ limiter: sluiceLimiter(variant, context).limiter, ...countWhenOf(variant) });
  return koaRateLimit({
    driver: variant.store,
    db: variant.store === 'memory' ? new Map() : context.redis,
    duration: WINDOW_MS,
    max: LIMIT[variant.path],
    id: (ctx) => ctx.ip,
    namespace: prefixOf(variant, context),
  });
}

/**
 * hono-rate-limiter's `RedisStore` on the shared ioredis client: its client interface is the
 * `@upstash/redis` one (script load, EVALSHA with keys and arguments apart, DECR, DEL).
 */
function honoRedisClient(redis: Redis): HonoRedisClient {
  return {
    scriptLoad: (script) => redis.script('LOAD', script) as Promise<string>,
    evalsha: ((sha: string, keys: string[], args: unknown[]) =>
      redis.evalsha(sha, keys.length, ...keys, ...args.map(String))) as HonoRedisClient['evalsha'],
    decr: (key) => redis.decr(key),
    del: (key) => redis.del(key),
  };
}

function honoMiddleware(variant: Variant, context: Context): MiddlewareHandler {
  if (variant.limiter === 'noop') return (_c, next) => next();
  if (variant.limiter === 'floor-get' || variant.limiter === 'floor-batch') {
    const call = floorCall(variant, context);
    return async (_c, next) => {
      await call();
      await next();
    };
  }
  if (variant.limiter === 'concurrency')
    return honoConcurrency({ limiter: concurrencyLimiter(variant, context) });
  if (variant.limiter !== 'usual')
    return sluiceHono({ limiter: sluiceLimiter(variant, context).limiter, ...countWhenOf(variant) });
  return honoRateLimiter({
    windowMs: WINDOW_MS,
    limit: LIMIT[variant.path],
    // It has no default key: the client address, as its README shows for Node.
    keyGenerator: (c) => getConnInfo(c).remote.address ?? '',
    ...(variant.store === 'redis'
      ? {
          store: new HonoRedisStore({
            client: honoRedisClient(context.redis),
            prefix: `${prefixOf(variant, context)}:`,
          }),
        }
      : {}),
  });
}

function listenNode(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/** A running app: its port and how to close it. */
export interface RunningApp {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts one app of `framework` on a free loopback port: `GET /` answers `{ hello: 'world' }`
 * (Hono on `@hono/node-server`),
 * behind the variant's limiter (or none for `bare`), each limiter with its defaults otherwise.
 */
export async function startApp(
  framework: Framework,
  variant: Variant | 'bare',
  context: Context,
): Promise<RunningApp> {
  if (framework === 'fastify') {
    const app = Fastify();
    if (variant !== 'bare') {
      if (variant.limiter === 'noop') {
        // As sluice's plugin and concurrencyLimit: a callback-style onRequest hook.
        app.addHook('onRequest', (_request, _reply, done) => done());
      } else if (variant.limiter === 'floor-get' || variant.limiter === 'floor-batch') {
        const call = floorCall(variant, context);
        app.addHook('onRequest', async () => {
          await call();
        });
      } else if (variant.limiter === 'concurrency') {
        app.addHook('onRequest', fastifyConcurrency({ limiter: concurrencyLimiter(variant, context) }));
      } else if (variant.limiter !== 'usual') {
        await app.register(sluiceFastify, {
          limiter: sluiceLimiter(variant, context).limiter,
          ...countWhenOf(variant),
        });
      } else {
        await app.register(fastifyRateLimit, {
          max: LIMIT[variant.path],
          timeWindow: WINDOW_MS,
          ...(variant.store === 'redis'
            ? { redis: context.redis, nameSpace: `${prefixOf(variant, context)}-` }
            : {}),
        });
      }
    }
    app.get('/', async () => BODY);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
  }
  let server: Server;
  if (framework === 'express') {
    const app = express();
    if (variant !== 'bare') app.use(expressMiddleware(variant, context));
    app.get('/', (_req, res) => {
      res.json(BODY);
    });
    server = createServer(app);
  } else if (framework === 'hono') {
    // On Node's own server, as @hono/node-server's serve() runs it.
    const app = new Hono();
    if (variant !== 'bare') app.use(honoMiddleware(variant, context));
    app.get('/', (c) => c.json(BODY));
    server = createServer(getRequestListener(app.fetch));
  } else {
    const app = new Koa();
    // autocannon closes sockets with pipelined requests in flight at the end of each run.
    app.silent = true;
    if (variant !== 'bare') app.use(koaMiddleware(variant, context));
    app.use((ctx) => {
      ctx.body = BODY;
    });
    server = createServer(app.callback());
  }
  const port = await listenNode(server);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type { Context as AppContext };
