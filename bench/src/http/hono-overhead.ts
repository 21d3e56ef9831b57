// What a limit adds to one Hono request, in process, without sockets: server CPU ns per
// `app.fetch` with `@hono/node-server`'s bindings (Node's request and response, as it passes
// them), its lighter `Response` in place of Node's, each app a middleware and `GET /` answering
// `c.json`. Apps interleaved, median of 9 rounds; what the HTTP section's ratios swing around on
// a busy machine. For work on `@sluice/hono`.
//   cd bench && npx tsx src/http/hono-overhead.ts      (HONO_ONLY=bare,sluice to narrow)
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { createLimiter, MemoryStore } from '@sluice/core';
import { concurrencyLimit, rateLimit } from '@sluice/hono';
import { Hono, type MiddlewareHandler } from 'hono';
import { rateLimiter } from 'hono-rate-limiter';
import { ADMIT_ALL, WINDOW_MS } from '../limits';

// Its lighter Response in place of Node's, as once it serves.
getRequestListener(() => new Response());

const ROUNDS = 9;
const REQUESTS = 20_000;
const socket = new Socket();
Object.defineProperty(socket, 'remoteAddress', { value: '127.0.0.1' });
const headers = { host: '127.0.0.1:3000', connection: 'keep-alive', accept: '*/*' };
const request = new Request('http://127.0.0.1:3000/', { headers });

function app(middleware?: MiddlewareHandler): Hono {
  const hono = new Hono();
  if (middleware !== undefined) hono.use(middleware);
  hono.get('/', (c) => c.json({ hello: 'world' }));
  return hono;
}

const limiter = (limit: number) =>
  createLimiter({ rate: { limit, window: WINDOW_MS }, burst: limit - 1, store: new MemoryStore() });
const byAddress = {
  keyGenerator: (c: Parameters<typeof getConnInfo>[0]) => getConnInfo(c).remote.address ?? '',
};

const APPS: ReadonlyArray<readonly [string, Hono]> = [
  ['bare', app()],
  ['noop', app((_c, next) => next())],
  ['sluice', app(rateLimit({ limiter: limiter(ADMIT_ALL) }))],
  ['sluice countWhen', app(rateLimit({ limiter: limiter(ADMIT_ALL), countWhen: 'failed' }))],
  ['hono-rate-limiter', app(rateLimiter({ windowMs: WINDOW_MS, limit: ADMIT_ALL, ...byAddress }))],
  ['sluice concurrencyLimit', app(concurrencyLimit({ max: 1_000_000 }))],
  ['sluice 429', app(rateLimit({ limiter: limiter(1) }))],
  ['hono-rate-limiter 429', app(rateLimiter({ windowMs: WINDOW_MS, limit: 1, ...byAddress }))],
];

/** CPU ns per request of `hono` over `REQUESTS` requests, one after the other. */
async function cpuPerRequest(hono: Hono): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const incoming = new IncomingMessage(socket);
    incoming.url = '/';
    incoming.method = 'GET';
    incoming.headers = headers;
    const outgoing = new ServerResponse(incoming);
    await hono.fetch(request, { incoming, outgoing });
    outgoing.finished = true; // as sent: countWhen reads writableFinished
    outgoing.emit('close'); // a concurrency permit goes back, countWhen's units
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / REQUESTS;
}

async function main(): Promise<void> {
  const only = process.env.HONO_ONLY?.split(',');
  const chosen = APPS.filter(([name]) => only === undefined || only.includes(name));
  for (const [, hono] of chosen) await cpuPerRequest(hono); // warm-up
  const samples = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++)
    for (const [name, hono] of chosen)
      samples.set(name, [...(samples.get(name) ?? []), await cpuPerRequest(hono)]);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
  const bare = samples.has('bare') ? median(samples.get('bare') as number[]) : 0;
  for (const [name, values] of samples) {
    const ns = median(values);
    process.stdout.write(
      `${name.padEnd(26)} ${ns.toFixed(0).padStart(6)} ns  +${(ns - bare).toFixed(0)} over bare\n`,
    );
  }
}

void main();
