// What sluice adds to one request, in process, without sockets: ns per request of the limiter
// alone, the HTTP layer's decision, and each adapter's middleware on its framework's own request
// objects (Koa's context; for Fastify the plugin's own hook, on a stand-in reply with the header
// API, as Fastify's request and reply cannot be built without a server). For work on the
// adapters; noisy machines make the HTTP section's ratios swing more than these. Also
// `countWhen: 'failed'` beside the same limit without it (OVERHEAD_ONLY=countWhen for those).
//   cd bench && npx tsx src/http/overhead.ts
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { createConcurrencyLimiter, createLimiter, MemoryStore, type Limiter } from '@sluice/core';
import { createHttpConcurrencyLimiter, createHttpLimiter } from '@sluice/core/adapter';
import { concurrencyLimit as expressConcurrency, rateLimit as expressRateLimit } from '@sluice/express';
import sluiceFastify, { concurrencyLimit as fastifyConcurrency } from '@sluice/fastify';
import { concurrencyLimit as koaConcurrency, rateLimit as koaRateLimit } from '@sluice/koa';
import Koa from 'koa';

const ROUNDS = Number(process.env.OVERHEAD_ROUNDS ?? 7);
const MS = Number(process.env.OVERHEAD_MS ?? 200);
/** Only the cases whose name holds this text. */
const only = process.env.OVERHEAD_ONLY;

function limiterFor(path: 'admitted' | '429'): Limiter {
  return createLimiter({
    rate: path === 'admitted' ? { limit: 100_000_000, window: 60_000 } : '1r/m',
    store: new MemoryStore(),
  });
}

function socketFrom(address: string): Socket {
  const socket = new Socket();
  Object.defineProperty(socket, 'remoteAddress', { value: address });
  return socket;
}

function incoming(socket: Socket): IncomingMessage {
  const req = new IncomingMessage(socket);
  req.url = '/';
  req.method = 'GET';
  req.headers = { host: '127.0.0.1:3000', connection: 'keep-alive', accept: '*/*' };
  return req;
}

/** Median ns per call of `fn` over ROUNDS rounds of MS ms. */
function measure(fn: () => void): number {
  const perCall: number[] = [];
  for (let round = 0; round < ROUNDS + 1; round++) {
    let calls = 0;
    const started = process.hrtime.bigint();
    const until = started + BigInt(MS * 1e6);
    let now = started;
    while (now < until) {
      for (let i = 0; i < 1000; i++) fn();
      calls += 1000;
      now = process.hrtime.bigint();
    }
    if (round > 0) perCall.push(Number(now - started) / calls);
  }
  perCall.sort((a, b) => a - b);
  return perCall[Math.floor(perCall.length / 2)] as number;
}

type Hook = (request: unknown, reply: unknown, done: () => void) => void;

/** The hook the Fastify plugin puts on a route, taken from a stand-in instance. */
async function fastifyHook(limiter: Limiter): Promise<Hook> {
  let onRoute: ((route: Record<string, unknown>) => void) | undefined;
  const instance = { addHook: (_name: string, fn: typeof onRoute) => (onRoute = fn) };
  await (sluiceFastify as unknown as (i: unknown, o: unknown) => Promise<void>)(instance, { limiter });
  const route: Record<string, unknown> = { method: 'GET', url: '/', config: {} };
  onRoute?.(route);
  return (route.onRequest as Hook[])[0] as Hook;
}

async function cases(path: 'admitted' | '429'): Promise<Array<[string, () => void]>> {
  const address = process.env.OVERHEAD_ADDRESS ?? '127.0.0.1';
  const socket = socketFrom(address);
  const req = incoming(socket);
  const res = new ServerResponse(req);
  const limiter = limiterFor(path);
  const http = createHttpLimiter({ limiter: limiterFor(path) });
  const neutral = { remoteAddress: address, url: '/', headers: req.headers };

  const express = expressRateLimit({ limiter: limiterFor(path) });
  const expressReq = Object.assign(incoming(socket), { originalUrl: '/' });
  const next = (): void => undefined;

  const koa = new Koa();
  const koaMiddleware = koaRateLimit({ limiter: limiterFor(path) });
  const koaNext = (): Promise<void> => Promise.resolve();

  const hook = await fastifyHook(limiterFor(path));
  const headers: Record<string, string> = {};
  const reply = {
    raw: res,
    header(name: string, value: string) {
      headers[name] = value;
      return reply;
    },
    code: () => reply,
    type: () => reply,
    send: () => reply,
  };
  const fastifyRequest = { raw: req, url: '/', headers: req.headers };

  return [
    [`limiter.consumeSync (${path})`, () => void limiter.consumeSync('127.0.0.1')],
    [`createHttpLimiter.decideSync (${path})`, () => void http.decideSync(req, neutral)],
    [
      `express middleware, fresh ServerResponse (${path})`,
      () => express(expressReq as never, new ServerResponse(expressReq) as never, next),
    ],
    [`express: fresh ServerResponse alone`, () => void new ServerResponse(expressReq)],
    [
      `  the same with two setHeader calls (the draft-8 pair)`,
      () => {
        const fresh = new ServerResponse(expressReq);
        fresh.setHeader('RateLimit-Policy', '"100000000/1m";q=100000000;w=60');
        fresh.setHeader('RateLimit', '"100000000/1m";r=99999999;t=1');
      },
    ],
    [
      `koa middleware, fresh context (${path})`,
      () => void koaMiddleware(koa.createContext(req, new ServerResponse(req)), koaNext),
    ],
    [`koa: fresh context alone`, () => void koa.createContext(req, new ServerResponse(req))],
    [`fastify hook, stand-in reply (${path})`, () => hook(fastifyRequest, reply, next)],
  ];
}

/**
 * `concurrencyLimit` on the admitted path: a permit taken, then given back when the response
 * closes (emitted here). Each response is attached to the socket first, as Node does for the
 * request it is answering, so the release listens on the response itself.
 */
function concurrencyCases(): Array<[string, () => void]> {
  const address = process.env.OVERHEAD_ADDRESS ?? '127.0.0.1';
  const socket = socketFrom(address);
  const req = Object.assign(incoming(socket), { originalUrl: '/' });
  const fresh = (): ServerResponse => {
    const res = new ServerResponse(req);
    res.assignSocket(socket);
    return res;
  };
  const closed = (res: ServerResponse): void => {
    res.emit('close');
    res.detachSocket(socket);
  };
  const max = 1_000_000;
  const limiter = createConcurrencyLimiter({ max });
  const http = createHttpConcurrencyLimiter({ max });
  const neutral = { remoteAddress: address, url: '/', headers: req.headers };
  const express = expressConcurrency({ max });
  const koa = new Koa();
  const koaMiddleware = koaConcurrency({ max });
  const hook = fastifyConcurrency({ max }) as unknown as Hook;
  const next = (): void => undefined;
  const koaNext = (): Promise<void> => Promise.resolve();
  return [
    ['concurrency acquireSync + release', () => void limiter.acquireSync(address)?.permit?.release()],
    [
      'createHttpConcurrencyLimiter.decideSync + close',
      () => {
        const res = fresh();
        http.decideSync(req, neutral, res);
        closed(res);
      },
    ],
    [
      'express concurrencyLimit, fresh ServerResponse + close',
      () => {
        const res = fresh();
        express(req as never, res as never, next);
        closed(res);
      },
    ],
    ['express: fresh ServerResponse + close alone', () => closed(fresh())],
    [
      'koa concurrencyLimit, fresh context + close',
      () => {
        const res = fresh();
        void koaMiddleware(koa.createContext(req, res), koaNext);
        closed(res);
      },
    ],
    [
      'koa: fresh context + close alone',
      () => {
        const res = fresh();
        koa.createContext(req, res);
        closed(res);
      },
    ],
    [
      'fastify concurrencyLimit hook + close',
      () => {
        const res = fresh();
        hook({ raw: req, url: '/', headers: req.headers }, { raw: res }, next);
        closed(res);
      },
    ],
  ];
}

/**
 * `countWhen: 'failed'` on the admitted path, every response a 200: each request takes its unit,
 * then gives it back when its response closes (emitted here), beside the same limit without it.
 */
async function countWhenCases(): Promise<Array<[string, () => void]>> {
  const address = process.env.OVERHEAD_ADDRESS ?? '127.0.0.1';
  const socket = socketFrom(address);
  const req = Object.assign(incoming(socket), { originalUrl: '/' });
  const fresh = (): ServerResponse => {
    const res = new ServerResponse(req);
    res.assignSocket(socket);
    return res;
  };
  const closed = (res: ServerResponse): void => {
    res.emit('close');
    res.detachSocket(socket);
  };
  const neutral = { remoteAddress: address, url: '/', headers: req.headers };
  const next = (): void => undefined;
  const koaNext = (): Promise<void> => Promise.resolve();
  const koa = new Koa();
  const cases: Array<[string, () => void]> = [];
  for (const countWhen of [undefined, 'failed'] as const) {
    const tag = countWhen === undefined ? 'without countWhen' : "countWhen: 'failed'";
    const options = { limiter: limiterFor('admitted'), ...(countWhen === undefined ? {} : { countWhen }) };
    const http = createHttpLimiter(options);
    const express = expressRateLimit({ ...options, limiter: limiterFor('admitted') });
    const koaMiddleware = koaRateLimit({ ...options, limiter: limiterFor('admitted') });
    cases.push(
      [
        `createHttpLimiter.decideSync + close, ${tag}`,
        () => {
          const res = fresh();
          http.decideSync(req, neutral, res);
          closed(res);
        },
      ],
      [
        `express middleware + close, ${tag}`,
        () => {
          const res = fresh();
          express(req as never, res as never, next);
          closed(res);
        },
      ],
      [
        `koa middleware + close, ${tag}`,
        () => {
          const res = fresh();
          void koaMiddleware(koa.createContext(req, res), koaNext);
          closed(res);
        },
      ],
    );
  }
  return cases;
}

async function main(): Promise<void> {
  for (const [name, fn] of await countWhenCases()) {
    if (only !== undefined && !name.includes(only)) continue;
    process.stdout.write(`${name.padEnd(52)} ${measure(fn).toFixed(0).padStart(6)} ns\n`);
  }
  for (const [name, fn] of concurrencyCases()) {
    if (only !== undefined && !name.includes(only)) continue;
    process.stdout.write(`${name.padEnd(52)} ${measure(fn).toFixed(0).padStart(6)} ns\n`);
  }
  for (const path of ['admitted', '429'] as const) {
    for (const [name, fn] of await cases(path)) {
      if (only !== undefined && !name.includes(only)) continue;
      process.stdout.write(`${name.padEnd(52)} ${measure(fn).toFixed(0).padStart(6)} ns\n`);
    }
  }
}

void main();
