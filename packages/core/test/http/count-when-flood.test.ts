import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Agent, createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { RedisStore, type LimiterOptions } from '../../src';
import {
  createHttpLimiter,
  decideAndWrite,
  fromNodeRequest,
  writeResponseOutcome,
  type RateLimitOptions,
} from '../../src/adapter';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { ensureCoreBuilt } from '../redis/worker-pool';

/**
 * A password-guessing flood against `rate: '5/15m', countWhen: 'failed'`, over real sockets: the
 * units are taken at admission, so however many guesses race, exactly 5 reach the handler — in
 * memory, on Redis, and with 4 app processes sharing Redis. Successes are given back: a user
 * who always types the right password is never refused.
 */
const redis = useRedisServer();
const servers: Server[] = [];
const children: ChildProcess[] = [];
let prefixes = 0;

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, 'exit');
    process.kill(child.pid as number, 'SIGTERM');
    await exited;
  }
});

type Options = RateLimitOptions<IncomingMessage, never>;

/** A login route behind `options`: 401 for a wrong password, 200 for `?password=right`. */
async function serveLogin(options: Options): Promise<{ url: string; handled: () => number }> {
  const limit = createHttpLimiter<IncomingMessage, never>(options);
  let handled = 0;
  const server = createServer((req, res) => {
    const answer = (pass: boolean): void => {
      if (!pass) return;
      handled++;
      res.statusCode = req.url?.includes('password=right') === true ? 200 : 401;
      res.end();
    };
    const pass = decideAndWrite(limit, req, res, fromNodeRequest(req), res, writeResponseOutcome);
    if (typeof pass === 'boolean') answer(pass);
    else pass.then(answer, () => ((res.statusCode = 500), res.end()));
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, handled: () => handled };
}

/** Resolves the status of `GET url`. */
function status(url: string, agent?: Agent): Promise<number> {
  return new Promise((done, fail) => {
    get(url, agent === undefined ? { agent: false } : { agent }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    }).on('error', fail);
  });
}

/** `count` guesses at once, spread over `urls`: their statuses, counted. */
async function flood(urls: readonly string[], count: number): Promise<Record<number, number>> {
  const statuses = await Promise.all(
    Array.from({ length: count }, (_, i) => status(`${urls[i % urls.length]}/login?password=guess${i}`)),
  );
  const counted: Record<number, number> = {};
  for (const s of statuses) counted[s] = (counted[s] ?? 0) + 1;
  return counted;
}

const LOGIN = { key: 'victim', rate: '5/15m', countWhen: 'failed' } as const;
/** Every decision from Redis, however slow the loaded machine makes it. */
const SHARED = { timeoutMs: 60_000, onStoreError: 'fail-closed' } as const;

test('memory: 300 concurrent wrong passwords, exactly 5 reach the handler', async () => {
  const app = await serveLogin({ ...LOGIN, clock: fakeClock() });
  expect(await flood([app.url], 300)).toEqual({ 401: 5, 429: 295 });
  expect(app.handled()).toBe(5);
});

test('Redis: 300 concurrent wrong passwords, exactly 5 reach the handler', async () => {
  const store = new RedisStore({ client: redis.client() });
  const app = await serveLogin({ ...LOGIN, ...SHARED, store, prefix: `flood-${++prefixes}` });
  expect(await flood([app.url], 300)).toEqual({ 401: 5, 429: 295 });
  expect(app.handled()).toBe(5);
});

test('4 processes sharing Redis: 300 concurrent wrong passwords, exactly 5 reach a handler', async () => {
  const dist = ensureCoreBuilt();
  const adapter = join(resolve(dist, '..'), 'adapter.cjs');
  const prefix = `flood-processes-${++prefixes}`;
  const worker = join(__dirname, 'workers', 'login-worker.cjs');
  const urls = await Promise.all(
    Array.from({ length: 4 }, async () => {
      const child = fork(worker, [adapter, dist, String(redis.server().port), prefix], {
        execArgv: [],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      children.push(child);
      const [ready] = (await once(child, 'message')) as [{ url: string }];
      return ready.url;
    }),
  );
  expect(await flood(urls, 300)).toEqual({ 401: 5, 429: 295 });
  const handled = await Promise.all(
    children.map(async (child) => {
      const reply = once(child, 'message');
      child.send({ type: 'count' });
      const [message] = (await reply) as [{ handled: number }];
      return message.handled;
    }),
  );
  expect(handled.reduce((a, b) => a + b, 0)).toBe(5);
}, 60_000);

describe.each([
  ['memory', (): Partial<LimiterOptions> => ({})],
  [
    'Redis',
    (): Partial<LimiterOptions> => ({ ...SHARED, store: new RedisStore({ client: redis.client() }) }),
  ],
])('%s', (_name, storeOf) => {
  test('1000 successful logins in a row are never refused', async () => {
    const app = await serveLogin({ ...LOGIN, ...storeOf(), clock: fakeClock(), prefix: `ok-${++prefixes}` });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 1000; i++) {
        const got = await status(`${app.url}/login?password=right`, agent);
        if (got !== 200) throw new Error(`login ${i + 1} answered ${got}`);
      }
    } finally {
      agent.destroy();
    }
    expect(app.handled()).toBe(1000);
  }, 60_000);
});
