import Redis from 'ioredis';
import {
  createConcurrencyLimiter,
  MemoryStore,
  RedisStore,
  type ConcurrencyDecision,
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
} from '../../src';
import { permitTable } from '../../src/concurrency/permit-table';
import { COOLDOWN_MS } from '../../src/resilience/store-guard';
import { fakeClock, type FakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { startTcpProxy, type TcpProxy } from '../harness/tcp-proxy';

/**
 * One process never holds more than `max` permits of a key (its share with `instances`) across
 * Redis and the insurance store: the insurance counts the leases this process holds, and Redis's
 * admissions count the insurance permits still held here. Redis is stalled by a proxy holding
 * every packet back (as `DEBUG SLEEP` does); the timers, `performance` and the leases' clock are
 * fake, so a call "times out" when the test moves time, never by sleeping.
 */
const redis = useRedisServer();
const TIMEOUT_MS = 50;
const LEASE_MS = 30_000;
let admin: Redis;
let prefixes = 0;

beforeAll(() => {
  admin = redis.client();
});
afterEach(() => jest.useRealTimers());

/** Lets I/O and immediates run until `condition` holds: bounded by wall time, never a timed sleep. */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A limiter on its own connection through a proxy that can stall it, with what the test reads. */
interface Rig {
  readonly limiter: ConcurrencyLimiter;
  readonly proxy: TcpProxy;
  readonly client: Redis;
  readonly clock: FakeClock;
  readonly insurance: MemoryStore;
  readonly prefix: string;
  /** The key's sorted set in Redis. */
  readonly redisKey: string;
  /** Insurance permits of the key counted in this process. */
  insured(): number;
  /** Stall Redis (`true`) or let it answer again, its held packets delivered in order. */
  stall(on: boolean): Promise<void>;
  /** Lets the circuit's cooldown pass: the next acquire probes Redis. */
  cooledDown(): void;
  close(): Promise<void>;
}

/** Fakes the timers and `performance` (the deadlines' and batches' time); I/O and immediates stay real. */
function fakeTime(): void {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'hrtime'] });
}

async function rig(options: Partial<ConcurrencyLimiterOptions> = {}): Promise<Rig> {
  const proxy = await startTcpProxy(redis.server().port);
  const client = new Redis({ host: '127.0.0.1', port: proxy.port });
  await client.ping();
  const clock = fakeClock();
  const insurance = new MemoryStore();
  const prefix = `held-${++prefixes}`;
  const store = new RedisStore({ client });
  const limiter = createConcurrencyLimiter({
    max: 3,
    store,
    prefix,
    clock,
    leaseMs: LEASE_MS,
    timeoutMs: TIMEOUT_MS,
    onStoreError: { insurance },
    ...options,
  });
  await (await limiter.acquire('warm')).permit?.release(); // scripts loaded
  const redisKey = store.permits().keyOf({ prefix, key: 'k' });
  return {
    limiter,
    proxy,
    client,
    clock,
    insurance,
    prefix,
    redisKey,
    insured: () => permitTable(insurance, prefix).count('k'),
    async stall(on) {
      proxy.setBlackhole(on);
      if (on) return;
      // The ping's answer follows every call held back: their late answers are in.
      await client.ping();
    },
    cooledDown: () => clock.advance(COOLDOWN_MS),
    async close() {
      client.disconnect();
      await proxy.close();
    },
  };
}

/** Acquires made while Redis is stalled: their calls time out when the test moves the timers. */
async function whileStalled(limiter: ConcurrencyLimiter, n: number): Promise<ConcurrencyDecision[]> {
  const asked = Array.from({ length: n }, () => limiter.acquire('k'));
  jest.advanceTimersByTime(TIMEOUT_MS + 1);
  return Promise.all(asked);
}

const outcome = (d: ConcurrencyDecision): string =>
  `${d.allowed ? 'allowed' : (d.reason ?? 'refused')}/${d.degraded ?? 'redis'}`;

/** Everything released: nothing held here, in the insurance table or in Redis. */
async function expectEmpty(r: Rig): Promise<void> {
  await until(async () => (await admin.exists(r.redisKey)) === 0, 'Redis holds no lease of the key');
  expect(r.limiter.stats()).toEqual({ inFlight: 0, queued: 0 });
  expect(r.insured()).toBe(0);
  expect(await r.limiter.inFlight('k')).toBe(0);
}

describe('insurance permits and Redis permits of one process, together', () => {
  test('A: with max Redis permits held, a stall admits nothing more; a lease released frees one insurance place', async () => {
    fakeTime();
    const r = await rig();
    try {
      const held = [await r.limiter.acquire('k'), await r.limiter.acquire('k'), await r.limiter.acquire('k')];
      expect(held.map(outcome)).toEqual(Array(3).fill('allowed/redis'));
      expect(outcome(await r.limiter.acquire('k'))).toBe('limited/redis');

      await r.stall(true);
      const stalled = await whileStalled(r.limiter, 3);
      expect(stalled.map(outcome)).toEqual(Array(3).fill('limited/insurance'));
      expect(stalled[0]?.inFlight).toBe(3);
      expect(r.limiter.stats().inFlight).toBe(3);
      expect(r.insured()).toBe(0);

      // The circuit is open: this release is retried later, and its place is the insurance's now.
      await held[0]?.permit?.release();
      const insured = await r.limiter.acquire('k');
      expect(outcome(insured)).toBe('allowed/insurance');
      expect(insured.inFlight).toBe(3);
      expect(outcome(await r.limiter.acquire('k'))).toBe('limited/insurance');
      expect(r.limiter.stats().inFlight).toBe(3);

      await r.stall(false);
      r.cooledDown();
      // Redis answers again: it still counts the lease whose release waits for its retry.
      const probe = await r.limiter.acquire('k');
      expect(outcome(probe)).toBe('limited/redis');
      expect(r.limiter.stats().inFlight).toBe(3);

      for (const d of [...held, insured]) await d.permit?.release();
      jest.advanceTimersByTime(LEASE_MS / 3); // the failed release's retry
      await expectEmpty(r);
    } finally {
      await r.close();
    }
  });

  test('B: insurance permits still held when Redis answers again: Redis admits only beside them', async () => {
    fakeTime();
    const r = await rig();
    try {
      await r.stall(true);
      const insured = await whileStalled(r.limiter, 4);
      expect(insured.map(outcome)).toEqual([...Array(3).fill('allowed/insurance'), 'limited/insurance']);
      await r.stall(false);
      // The stalled acquires ran in Redis after all; their leases go back when their answers come.
      await until(async () => (await admin.zcard(r.redisKey)) === 0, 'the late leases are given back');

      r.cooledDown();
      const after = [];
      for (let i = 0; i < 3; i++) after.push(await r.limiter.acquire('k'));
      expect(after.map(outcome)).toEqual(Array(3).fill('limited/redis'));
      expect(after[0]?.inFlight).toBe(3);
      expect(r.limiter.stats().inFlight).toBe(3);
      // Each refused lease went back at once: Redis holds none of them.
      await until(async () => (await admin.zcard(r.redisKey)) === 0, 'the refused leases are given back');

      // One insurance permit back: one place for Redis, and no more.
      await insured[0]?.permit?.release();
      const real = await r.limiter.acquire('k');
      expect(outcome(real)).toBe('allowed/redis');
      expect(outcome(await r.limiter.acquire('k'))).toBe('limited/redis');
      expect(r.limiter.stats().inFlight).toBe(3);
      expect(r.insured()).toBe(2);

      // Every insurance permit back: Redis alone decides again, up to max.
      for (const d of insured) await d.permit?.release();
      const more = [await r.limiter.acquire('k'), await r.limiter.acquire('k')];
      expect(more.map(outcome)).toEqual(['allowed/redis', 'allowed/redis']);
      expect(more[1]?.inFlight).toBe(3);
      expect(outcome(await r.limiter.acquire('k'))).toBe('limited/redis');

      for (const d of [real, ...more]) await d.permit?.release();
      await expectEmpty(r);
    } finally {
      await r.close();
    }
  });

  test('C: Redis forgot the lease held here, insurance permits held too: a lease Redis grants is kept only within max beside both', async () => {
    fakeTime();
    const r = await rig();
    try {
      const lease = await r.limiter.acquire('k');
      expect(outcome(lease)).toBe('allowed/redis');
      await r.stall(true);
      const stalled = await whileStalled(r.limiter, 3);
      expect(stalled.map(outcome)).toEqual(['allowed/insurance', 'allowed/insurance', 'limited/insurance']);
      await r.stall(false);
      await until(async () => (await admin.zcard(r.redisKey)) === 1, 'the late leases are given back');
      // Redis forgets the key (a restart without persistence) while its request still runs here.
      await admin.del(r.redisKey);
      r.cooledDown();
      // Redis counts none; this process runs a lease and two insurance permits: max already.
      const refused = await r.limiter.acquire('k');
      expect(outcome(refused)).toBe('limited/redis');
      expect(refused.inFlight).toBe(3);
      await stalled[0]?.permit?.release();
      const one = await r.limiter.acquire('k');
      expect(outcome(one)).toBe('allowed/redis');
      expect(outcome(await r.limiter.acquire('k'))).toBe('limited/redis');
      expect(r.limiter.stats().inFlight).toBe(3);
      // The forgotten lease still counts here: renewed, it is in Redis again.
      jest.advanceTimersByTime(LEASE_MS / 3);
      await until(async () => (await admin.zcard(r.redisKey)) === 2, 'the running lease is taken back');
      for (const d of [lease, one, ...stalled]) await d.permit?.release();
      await expectEmpty(r);
    } finally {
      await r.close();
    }
  });

  test('instances divides the share: Redis leases held here take their part of it', async () => {
    fakeTime();
    const r = await rig({ max: 4, onStoreError: { insurance: new MemoryStore(), instances: 2 } });
    try {
      const lease = await r.limiter.acquire('k');
      expect(outcome(lease)).toBe('allowed/redis');
      await r.stall(true);
      const stalled = await whileStalled(r.limiter, 3);
      // A share of 2: the lease held here and one insurance permit.
      expect(stalled.map(outcome)).toEqual(['allowed/insurance', 'limited/insurance', 'limited/insurance']);
      expect(r.limiter.stats().inFlight).toBe(2);
      await r.stall(false);
      r.cooledDown();
      for (const d of [lease, ...stalled]) await d.permit?.release();
      jest.advanceTimersByTime(LEASE_MS / 3); // the retry of the lease's release, if it failed
      await until(async () => (await admin.exists(r.redisKey)) === 0, 'Redis holds no lease of the key');
      expect(r.limiter.stats()).toEqual({ inFlight: 0, queued: 0 });
    } finally {
      await r.close();
    }
  });

  test('with a queue, a waiter is not served by the insurance while the Redis permits are held; a lease given back here is handed over', async () => {
    fakeTime();
    const r = await rig({ max: 2, queue: { maxWaitMs: 60_000 } });
    try {
      const held = [await r.limiter.acquire('k'), await r.limiter.acquire('k')];
      expect(held.map(outcome)).toEqual(['allowed/redis', 'allowed/redis']);
      await r.stall(true);
      const waiting = r.limiter.acquire('k');
      // Its first asks time out and are decided by the insurance, which has no place to give.
      for (let i = 0; i < 20; i++) {
        jest.advanceTimersByTime(TIMEOUT_MS);
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(r.limiter.stats()).toEqual({ inFlight: 2, queued: 1 });
      expect(r.insured()).toBe(0);
      await held[0]?.permit?.release();
      const served = await waiting;
      expect(outcome(served)).toBe('allowed/redis');
      expect(r.limiter.stats()).toEqual({ inFlight: 2, queued: 0 });
      await r.stall(false);
      r.cooledDown();
      for (const d of [held[1], served]) await d?.permit?.release();
      jest.advanceTimersByTime(LEASE_MS / 3);
      await expectEmpty(r);
    } finally {
      await r.close();
    }
  });

  test("'fail-closed' is unchanged: a stall refuses with store-unavailable, Redis admits up to max once back", async () => {
    fakeTime();
    const r = await rig({ onStoreError: 'fail-closed' });
    try {
      const held = [await r.limiter.acquire('k'), await r.limiter.acquire('k')];
      await r.stall(true);
      const stalled = await whileStalled(r.limiter, 2);
      expect(stalled.map(outcome)).toEqual(Array(2).fill('store-unavailable/fail-closed'));
      expect(r.limiter.stats().inFlight).toBe(2);
      await r.stall(false);
      await until(async () => (await admin.zcard(r.redisKey)) === 2, 'the late leases are given back');
      r.cooledDown();
      const third = await r.limiter.acquire('k');
      expect(outcome(third)).toBe('allowed/redis');
      expect(outcome(await r.limiter.acquire('k'))).toBe('limited/redis');
      for (const d of [...held, third]) await d.permit?.release();
      await expectEmpty(r);
    } finally {
      await r.close();
    }
  });
});
