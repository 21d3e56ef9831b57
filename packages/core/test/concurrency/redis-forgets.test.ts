import Redis from 'ioredis';
import {
  createConcurrencyLimiter,
  RedisStore,
  type ConcurrencyDecision,
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
} from '../../src';
import { fakeTimersOnly } from '../harness/fake-timers';
import { useRedisServer } from '../harness/redis-fixtures';
import { startRedisServer, type RedisProcess } from '../harness/redis-server';

/**
 * Redis forgetting the permits while their requests still run: a `FLUSHALL`, and a redis-server
 * SIGKILLed and started again on its port without persistence. No process may then hold more
 * than `max` of a key: a new acquire counts the leases this process runs, and a renewal takes
 * every running lease back, whatever the key's count. The renewal timer is fake (moved by hand);
 * Redis, its `TIME` and the sockets are real.
 */
const LEASE_MS = 30_000;
const RENEWAL_MS = LEASE_MS / 3;
const TIMEOUT_MS = 5000;

/** Lets I/O and immediates run until `condition` holds: bounded by wall time, never a timed sleep. */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const allowed = (decisions: readonly ConcurrencyDecision[]): boolean[] => decisions.map((d) => d.allowed);
const acquireMany = (limiter: ConcurrencyLimiter, n: number): Promise<ConcurrencyDecision[]> =>
  Promise.all(Array.from({ length: n }, () => limiter.acquire('k')));
const releaseAll = (decisions: readonly ConcurrencyDecision[]): Promise<unknown> =>
  Promise.all(decisions.map((d) => d.permit?.release()));

afterEach(() => jest.useRealTimers());

describe('Redis forgets the permits (FLUSHALL) while their requests run', () => {
  const redis = useRedisServer();
  let admin: Redis;
  let prefixes = 0;
  beforeAll(() => {
    admin = redis.client();
  });
  const limiterOn = (store: RedisStore, options: Partial<ConcurrencyLimiterOptions> = {}) =>
    createConcurrencyLimiter({
      max: 2,
      store,
      prefix: `forgets-${prefixes}`,
      leaseMs: LEASE_MS,
      timeoutMs: TIMEOUT_MS,
      ...options,
    });

  describe.each([
    ['batching on', true],
    ['batch: false', false],
  ] as const)('%s', (_mode, batch) => {
    test('no new acquire passes while the leases held here reach max; the renewal takes them back; none is dropped', async () => {
      fakeTimersOnly();
      prefixes++;
      const limiter = limiterOn(new RedisStore({ client: redis.client(), batch }));
      const lapsed: string[] = [];
      limiter.on('leaseLost', ({ key }) => lapsed.push(key));
      const running = await acquireMany(limiter, 2);
      expect(allowed(running)).toEqual([true, true]);

      await admin.flushall();
      expect(await limiter.inFlight('k')).toBe(0); // Redis has forgotten them
      const late = await acquireMany(limiter, 3);
      expect(allowed(late)).toEqual([false, false, false]);
      expect(late[0]).toMatchObject({ reason: 'limited', inFlight: 2 });
      expect(limiter.stats().inFlight).toBe(2);

      jest.advanceTimersByTime(RENEWAL_MS);
      await until(async () => (await limiter.inFlight('k')) === 2, 'the running leases are taken back');
      expect(lapsed).toEqual(['k', 'k']);
      expect(limiter.stats().inFlight).toBe(2);
      expect((await limiter.acquire('k')).allowed).toBe(false);

      // Still tracked: renewed again, and released for real.
      jest.advanceTimersByTime(RENEWAL_MS);
      expect(await limiter.inFlight('k')).toBe(2);
      expect(lapsed).toHaveLength(2);
      await releaseAll(running);
      expect(await limiter.inFlight('k')).toBe(0);
      const again = await acquireMany(limiter, 3);
      expect(allowed(again)).toEqual([true, true, false]);
      await releaseAll(again);
      expect(jest.getTimerCount()).toBe(0);
    });
  });

  test('acquires at once with one lease held here: only max in all are kept', async () => {
    prefixes++;
    const limiter = limiterOn(new RedisStore({ client: redis.client() }), { max: 3 });
    const first = await limiter.acquire('k');
    await admin.flushall();
    // Redis sees none, and grants all five: two fit beside the one running here.
    const late = await acquireMany(limiter, 5);
    expect(late.filter((d) => d.allowed)).toHaveLength(2);
    expect(limiter.stats().inFlight).toBe(3);
    expect(await limiter.inFlight('k')).toBe(2); // the refused ones' leases went back
    await releaseAll([first, ...late]);
    expect(await limiter.inFlight('k')).toBe(0);
  });

  test('limiters of one store and prefix count their running leases together, as Redis does', async () => {
    prefixes++;
    const store = new RedisStore({ client: redis.client() });
    const a = limiterOn(store);
    const b = limiterOn(store);
    const held = [await a.acquire('k'), await b.acquire('k')];
    expect(allowed(held)).toEqual([true, true]);
    await admin.flushall();
    expect(allowed([await a.acquire('k'), await b.acquire('k')])).toEqual([false, false]);
    await releaseAll(held);
    const after = await acquireMany(b, 2);
    expect(allowed(after)).toEqual([true, true]);
    await releaseAll(after);
  });

  test('with a queue: a request waits while the leases held here reach max, and a permit released here is its', async () => {
    prefixes++;
    const limiter = limiterOn(new RedisStore({ client: redis.client() }), {
      queue: { maxWaitMs: 10_000 },
    });
    const running = await acquireMany(limiter, 2);
    await admin.flushall();
    const waiting = limiter.acquire('k');
    await until(() => limiter.stats().queued === 1, 'the request waits');
    await running[0]?.permit?.release();
    const served = await waiting;
    expect(served.allowed).toBe(true);
    expect(limiter.stats()).toEqual({ inFlight: 2, queued: 0 });
    expect(allowed([await limiter.acquire('k')])).toEqual([false]);
    await releaseAll([running[1] as ConcurrencyDecision, served]);
    expect(await limiter.inFlight('k')).toBe(0);
  });

  test('two instances (two stores): each takes its own running leases back; the key holds up to twice max until they end', async () => {
    fakeTimersOnly();
    prefixes++;
    const a = limiterOn(new RedisStore({ client: redis.client() }));
    const b = limiterOn(new RedisStore({ client: redis.client() }));
    const fromA = await acquireMany(a, 2);
    expect(allowed(fromA)).toEqual([true, true]);
    expect(allowed([await b.acquire('k')])).toEqual([false]);

    await admin.flushall();
    // Instance A runs max: it takes no more. B sees a free key, as Redis does.
    expect(allowed([await a.acquire('k')])).toEqual([false]);
    const fromB = await acquireMany(b, 3);
    expect(allowed(fromB)).toEqual([true, true, false]);

    jest.advanceTimersByTime(RENEWAL_MS);
    await until(async () => (await a.inFlight('k')) === 4, "A's running leases are taken back beside B's");
    expect([a.stats().inFlight, b.stats().inFlight]).toEqual([2, 2]);
    expect(allowed([await a.acquire('k'), await b.acquire('k')])).toEqual([false, false]);
    // A's old requests end: the key is back to max, then below it.
    await releaseAll(fromA);
    expect(await b.inFlight('k')).toBe(2);
    expect(allowed([await a.acquire('k')])).toEqual([false]);
    await releaseAll(fromB);
    const after = await acquireMany(a, 2);
    expect(allowed(after)).toEqual([true, true]);
    await releaseAll(after);
  });
});

describe('Redis restarts without persistence while permits are held', () => {
  let server: RedisProcess | undefined;
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await server?.stop();
  });

  test('SIGKILLed and started again on its port: no new acquire passes; the renewal takes the running leases back', async () => {
    server = await startRedisServer();
    const { port } = server;
    // Reconnected by the test once the server is back: ioredis's own retries run on timers,
    // which are fake here.
    const client = new Redis({ host: '127.0.0.1', port, retryStrategy: () => null });
    const admin = new Redis({ host: '127.0.0.1', port, retryStrategy: () => null });
    clients.push(client, admin);
    fakeTimersOnly();
    const limiter = createConcurrencyLimiter({
      max: 2,
      store: new RedisStore({ client }),
      prefix: 'restart',
      leaseMs: LEASE_MS,
      timeoutMs: TIMEOUT_MS,
    });
    const running = await acquireMany(limiter, 2);
    expect(allowed(running)).toEqual([true, true]);

    await server.crash();
    server = await startRedisServer({ port, args: ['--save', '', '--appendonly', 'no'] });
    await until(() => client.status === 'end' && admin.status === 'end', 'the clients see the server gone');
    await Promise.all([client.connect(), admin.connect()]);
    expect(await admin.dbsize()).toBe(0);

    const late = await acquireMany(limiter, 2);
    expect(allowed(late)).toEqual([false, false]);
    expect(late.map((d) => d.degraded)).toEqual([undefined, undefined]);
    expect(limiter.stats().inFlight).toBe(2);

    jest.advanceTimersByTime(RENEWAL_MS);
    await until(async () => (await limiter.inFlight('k')) === 2, 'the running leases are taken back');
    expect(limiter.stats().inFlight).toBe(2);
    await releaseAll(running);
    expect(await limiter.inFlight('k')).toBe(0);
    const after = await acquireMany(limiter, 3);
    expect(allowed(after)).toEqual([true, true, false]);
    await releaseAll(after);
  }, 30_000);
});
