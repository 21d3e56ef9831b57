import Redis from 'ioredis';
import {
  createConcurrencyLimiter,
  MemoryStore,
  RedisStore,
  type ConcurrencyDecision,
  type ConcurrencyLimiter,
  type Store,
} from '../../src';
import { resolvePolicy } from '../../src/adapter';
import type { PermitStore } from '../../src/stores/permit-store';
import { MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';
import { FAILURE_THRESHOLD } from '../../src/resilience/store-guard';
import type { RedisPermits } from '../../src/stores/redis/redis-permits';
import { inBatches } from '../redis/in-batches';
import { fakeClock, FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { fakeTimersOnly } from '../harness/fake-timers';
import { commandCalls, scriptCalls } from '../harness/script-calls';
import { seededRandom } from '../redis/seeded-random';
import { startTcpProxy } from '../harness/tcp-proxy';

const redis = useRedisServer();
let client: Redis;
let admin: Redis;
let store: RedisStore;
let prefixes = 0;
/** Every decision from Redis: a first call (connection, script load) on a loaded machine can exceed 50 ms. */
const REDIS_TIMEOUT_MS = 5000;
/** A fresh namespace per limiter, so tests never see each other's permits. */
const fresh = (): string => `conc-${++prefixes}`;

beforeAll(() => {
  client = redis.client();
  admin = redis.client();
  store = new RedisStore({ client });
});

/** Lets timers and I/O run until `condition` holds: bounded by wall time, never a timed sleep. */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A store with permits whose keys the test can look at. */
type PermitsStore = Omit<Store, 'permits'> & { permits(): PermitStore & Pick<RedisPermits, 'keyOf'> };

/**
 * The store the limiters use: batching on (the default: sequential calls find the slot idle and
 * go alone), off, or every call inside a batch of the batch script (`inBatches`); `calls` script
 * calls per permit operation (a batched one comes with its companion peeks).
 */
const MODES = [
  ['batching on', (): PermitsStore => store, 1],
  ['batch: false', (): PermitsStore => new RedisStore({ client, batch: false }), 1],
  ['every call in a batch', (): PermitsStore => inBatches(store), MAX_IN_FLIGHT + 1],
] as const;

describe.each(MODES)('concurrency limits on Redis, %s', (_mode, storeOf, calls) => {
  afterEach(() => jest.useRealTimers());
  // Shadows the file's store for the limiters; its permits' keyOf is the store's.
  let store: PermitsStore;
  beforeAll(() => {
    store = storeOf();
  });

  test('at most max permits per key, shared by every limiter on the key; release is idempotent', async () => {
    const prefix = fresh();
    const a = createConcurrencyLimiter({ max: 2, store, prefix, timeoutMs: REDIS_TIMEOUT_MS });
    const b = createConcurrencyLimiter({ max: 2, store, prefix, timeoutMs: REDIS_TIMEOUT_MS });
    const first = await a.acquire('u');
    const second = await b.acquire('u');
    const third = await a.acquire('u');
    expect([first.allowed, second.allowed, third.allowed]).toEqual([true, true, false]);
    expect(second.inFlight).toBe(2);
    expect(third).toEqual({
      allowed: false,
      key: 'u',
      max: 2,
      inFlight: 2,
      retryAfterMs: 0,
      waitedMs: 0,
      reason: 'limited',
    });
    expect((await a.acquire('other')).allowed).toBe(true);
    await first.permit?.release();
    await first.permit?.release();
    expect(await a.inFlight('u')).toBe(1);
    await second.permit?.release();
    expect(await a.inFlight('u')).toBe(0);
    // An emptied set is gone from Redis: an idle key costs nothing.
    expect(await admin.exists(store.permits().keyOf({ prefix, key: 'u' }))).toBe(0);
    expect(a.stats()).toEqual({ inFlight: 1, queued: 0 });
  });

  test('an admitted request costs one script call to acquire and one to release', async () => {
    const limiter = createConcurrencyLimiter({
      max: 10,
      store,
      prefix: fresh(),
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    await (await limiter.acquire('warm')).permit?.release(); // scripts loaded on first use
    const before = await scriptCalls(admin);
    for (let i = 0; i < 20; i++) {
      const decision = await limiter.acquire(`k${i % 3}`);
      await decision.permit?.release();
    }
    expect((await scriptCalls(admin)) - before).toBe(40 * calls);
  });

  test('keys: one sorted set per key under its hash tag, escaped, with a TTL no longer than leaseMs', async () => {
    const prefix = fresh();
    const limiter = createConcurrencyLimiter({
      max: 5,
      store,
      prefix,
      leaseMs: '10s',
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const hostile = 'user}{x';
    const decision = await limiter.acquire(hostile);
    const key = store.permits().keyOf({ prefix, key: hostile });
    expect(key).toBe(`${prefix}:{user%7D%7Bx}:permits`);
    expect(await admin.type(key)).toBe('zset');
    const ttl = await admin.pttl(key);
    expect(ttl).toBeGreaterThan(9000);
    expect(ttl).toBeLessThanOrEqual(10_000);
    await decision.permit?.release();
    const prefixed = new RedisStore({ client, prefix: 'app{1}' });
    expect(prefixed.permits().keyOf({ prefix: 'p', key: '' })).toBe('app%7B1%7D:p:{%}:permits');
  });

  test("an acquire lengthens the key's expiry to leaseMs in one command, never shortens it, and gives a key without one its expiry", async () => {
    const prefix = fresh();
    const limiter = createConcurrencyLimiter({
      max: 5,
      store: storeOf(),
      prefix,
      leaseMs: '10s',
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const key = store.permits().keyOf({ prefix, key: 'k' });
    /** Acquires once: the PEXPIRE and PTTL calls it ran, and the key's TTL after. */
    const acquire = async (): Promise<[number, number, number]> => {
      await admin.config('RESETSTAT');
      expect((await limiter.acquire('k')).allowed).toBe(true);
      const calls = await commandCalls(admin);
      return [calls.pexpire ?? 0, calls.pttl ?? 0, await admin.pttl(key)];
    };
    const inLease = (ttl: number): boolean => ttl > 9000 && ttl <= 10_000;

    // A key made by the acquire, then one holding leases: one PEXPIRE each (GT on Redis 7).
    let [pexpire, pttl, ttl] = await acquire();
    expect([pexpire, pttl, inLease(ttl)]).toEqual([1, 0, true]);
    await admin.pexpire(key, 5000);
    [pexpire, pttl, ttl] = await acquire();
    expect([pexpire, pttl, inLease(ttl)]).toEqual([1, 0, true]);
    // Longer already (another limiter's longer leaseMs on the key): left as it is.
    await admin.pexpire(key, 60_000);
    [, , ttl] = await acquire();
    expect(ttl).toBeGreaterThan(50_000);
    // No expiry at all (someone's PERSIST): given one, so the key cannot live forever.
    await admin.persist(key);
    [, , ttl] = await acquire();
    expect(inLease(ttl)).toBe(true);
  });

  test('acquires at once on one key lengthen its expiry once per call, not once per acquire', async () => {
    const prefix = fresh();
    const limiter = createConcurrencyLimiter({
      max: 100,
      store: storeOf(),
      prefix,
      leaseMs: '10s',
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const key = store.permits().keyOf({ prefix, key: 'hot' });
    await (await limiter.acquire('hot')).permit?.release(); // scripts loaded on first use
    await admin.config('RESETSTAT');
    const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.acquire('hot')));
    expect(decisions.every((decision) => decision.allowed)).toBe(true);
    const stats = await commandCalls(admin);
    const calls = (stats.evalsha ?? 0) + (stats.eval ?? 0);
    // At most a PEXPIRE ... GT and a PTTL per call (a batch's acquires share one now).
    expect((stats.pexpire ?? 0) + (stats.pttl ?? 0)).toBeLessThanOrEqual(2 * calls);
    const ttl = await admin.pttl(key);
    expect(ttl).toBeGreaterThan(9000);
    expect(ttl).toBeLessThanOrEqual(10_000);
    for (const decision of decisions) await decision.permit?.release();
  });

  test('a lease not renewed expires after leaseMs: the permits of a holder gone silent come back', async () => {
    const prefix = fresh();
    const clock = fakeClock();
    const holder = createConcurrencyLimiter({
      max: 1,
      store,
      prefix,
      leaseMs: 5000,
      clock,
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    // Another instance: a store of its own (limiters on one store count the leases held here).
    const other = createConcurrencyLimiter({
      max: 1,
      store: new RedisStore({ client }),
      prefix,
      leaseMs: 5000,
      clock,
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const silent = await holder.acquire('k');
    expect(silent.allowed).toBe(true);
    clock.advance(4999);
    expect((await other.acquire('k')).allowed).toBe(false);
    clock.advance(1);
    expect(await other.inFlight('k')).toBe(0);
    const taken = await other.acquire('k');
    expect(taken.allowed).toBe(true);
    // Nothing left renewing in the background (other tests count script calls).
    await Promise.all([silent.permit?.release(), taken.permit?.release()]);
  });

  test('a held lease is renewed every third of leaseMs, and stops being renewed once released', async () => {
    const prefix = fresh();
    const clock = fakeClock();
    fakeTimersOnly();
    const holder = createConcurrencyLimiter({
      max: 1,
      store,
      prefix,
      leaseMs: 3000,
      clock,
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const other = createConcurrencyLimiter({
      max: 1,
      store,
      prefix,
      leaseMs: 3000,
      clock,
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const held = await holder.acquire('k');
    const key = store.permits().keyOf({ prefix, key: 'k' });
    const expiry = async (): Promise<number> => Number((await admin.zrange(key, 0, 0, 'WITHSCORES'))[1]);
    expect(await expiry()).toBe(FAKE_EPOCH + 3000);
    clock.advance(2000);
    jest.advanceTimersByTime(1000);
    await until(async () => (await expiry()) === FAKE_EPOCH + 5000, 'the lease is renewed');
    clock.advance(2500); // past the first expiry, before the renewed one
    expect((await other.acquire('k')).allowed).toBe(false);
    await held.permit?.release();
    expect(jest.getTimerCount()).toBe(0); // nothing left to renew: the timer is gone
    expect((await other.acquire('k')).allowed).toBe(true);
  });

  test('a clock that breaks while a lease is held: no timer throws, acquires reject naming it, the release still goes', async () => {
    const prefix = fresh();
    const clock = fakeClock();
    let broken = false;
    fakeTimersOnly();
    const holder = createConcurrencyLimiter({
      max: 1,
      store,
      prefix,
      leaseMs: 3000,
      clock: () => (broken ? Number.NaN : clock()),
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const held = await holder.acquire('k');
    expect(held.allowed).toBe(true);
    broken = true;
    // The renewal's tick reads the clock: it must not throw out of its timer (an uncaught
    // exception would end the process).
    expect(() => jest.advanceTimersByTime(1000)).not.toThrow();
    await expect(holder.acquire('k')).rejects.toThrow(/clock/);
    await held.permit?.release();
    expect(await holder.inFlight('k').catch(() => -1)).toBe(-1); // inFlight reads the clock too
    broken = false;
    expect(await holder.inFlight('k')).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('memory and Redis give the same decisions for the same sequence of acquires and releases', async () => {
    const random = seededRandom(17);
    const prefix = fresh();
    for (const max of [1, 2, 5]) {
      const memory = createConcurrencyLimiter({ max, store: new MemoryStore() });
      const shared = createConcurrencyLimiter({
        max,
        store,
        prefix: `${prefix}-${max}`,
        timeoutMs: REDIS_TIMEOUT_MS,
      });
      const held: Array<[ConcurrencyDecision, ConcurrencyDecision]> = [];
      for (let step = 0; step < 300; step++) {
        if (held.length > 0 && random() < 0.45) {
          const [m, r] = held.splice(random.int(0, held.length - 1), 1)[0] as [
            ConcurrencyDecision,
            ConcurrencyDecision,
          ];
          await Promise.all([m.permit?.release(), r.permit?.release()]);
          continue;
        }
        const key = random.pick(['a', 'b', 'c', '']);
        const [m, r] = [await memory.acquire(key), await shared.acquire(key)];
        expect({ step, allowed: r.allowed, inFlight: r.inFlight }).toEqual({
          step,
          allowed: m.allowed,
          inFlight: m.inFlight,
        });
        if (m.allowed) held.push([m, r]);
      }
      for (const key of ['a', 'b', 'c', ''])
        expect(await shared.inFlight(key)).toBe(await memory.inFlight(key));
      await Promise.all(held.flatMap(([m, r]) => [m.permit?.release(), r.permit?.release()]));
    }
  });

  test('the queue waits for a permit freed by another instance, first come first served here', async () => {
    const prefix = fresh();
    const other = createConcurrencyLimiter({ max: 1, store, prefix, timeoutMs: REDIS_TIMEOUT_MS });
    const waiting = createConcurrencyLimiter({
      max: 1,
      store,
      prefix,
      queue: { maxWaitMs: 5000 },
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const held = await other.acquire('k');
    const order: number[] = [];
    const waits = [1, 2].map((n) =>
      waiting.acquire('k').then((d) => {
        order.push(n);
        return d;
      }),
    );
    await until(() => waiting.stats().queued === 2, 'both wait');
    await held.permit?.release();
    const first = (await waits[0]) as ConcurrencyDecision;
    expect(first.allowed).toBe(true);
    // Released here: its lease is handed to the next in line, not given back and taken again.
    const leases = (): Promise<string[]> => admin.zrange(store.permits().keyOf({ prefix, key: 'k' }), 0, -1);
    const lease = await leases();
    await first.permit?.release();
    const second = (await waits[1]) as ConcurrencyDecision;
    expect(second.allowed).toBe(true);
    expect(await leases()).toEqual(lease);
    expect(order).toEqual([1, 2]);
    await second.permit?.release();
    expect(await waiting.inFlight('k')).toBe(0);
  });

  test('the first waiter asks Redis again backing off, not in a loop, also after a permit came', async () => {
    const prefix = fresh();
    const other = createConcurrencyLimiter({ max: 1, store, prefix, timeoutMs: REDIS_TIMEOUT_MS });
    const waiting = createConcurrencyLimiter({
      max: 1,
      store,
      prefix,
      queue: { maxWaitMs: 5000 },
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const held = await other.acquire('k');
    const first = waiting.acquire('k');
    const second = waiting.acquire('k');
    await until(() => waiting.stats().queued === 2, 'both wait');
    await held.permit?.release();
    expect((await first).allowed).toBe(true);
    // The second now waits on the first's permit, held here: 300 ms of retries 10, 20, 40, … ms
    // apart (capped at 250) are a handful of calls; a retry loop would be hundreds.
    const before = await scriptCalls(admin);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await scriptCalls(admin)) - before).toBeLessThanOrEqual(10 * calls);
    await (await first).permit?.release();
    expect((await second).allowed).toBe(true);
    await (await second).permit?.release();
  });

  test('bad data at a key decides as no permits and is replaced; a lease from far ahead holds nothing', async () => {
    const prefix = fresh();
    const limiter = createConcurrencyLimiter({ max: 1, store, prefix, timeoutMs: REDIS_TIMEOUT_MS });
    const key = store.permits().keyOf({ prefix, key: 'k' });
    await admin.set(key, 'garbage');
    const first = await limiter.acquire('k');
    expect(first.allowed).toBe(true);
    expect(await admin.type(key)).toBe('zset');
    await first.permit?.release();
    await admin.zadd(key, '+inf', 'forever');
    expect((await limiter.acquire('k')).allowed).toBe(true);
  });

  test('a lease from far ahead is dropped when it would refuse, never earlier: it refuses nothing', async () => {
    const prefix = fresh();
    const limiter = createConcurrencyLimiter({ max: 2, store, prefix, timeoutMs: REDIS_TIMEOUT_MS });
    const key = store.permits().keyOf({ prefix, key: 'k' });
    await admin.zadd(key, '+inf', 'forever');
    const first = await limiter.acquire('k');
    expect(first.allowed).toBe(true);
    // Under max with it: left alone, one command fewer per acquire.
    expect(await admin.zscore(key, 'forever')).toBe('inf');
    const second = await limiter.acquire('k');
    expect(second.allowed).toBe(true);
    expect(await admin.zscore(key, 'forever')).toBeNull();
    expect((await limiter.acquire('k')).allowed).toBe(false);
    await first.permit?.release();
    await second.permit?.release();
    expect((await limiter.acquire('k')).allowed).toBe(true);
  });
});

describe.each([
  ['batched', {}, MAX_IN_FLIGHT + Math.ceil((200 - MAX_IN_FLIGHT) / 64)],
  ['batch: false', { batch: false }, 200],
] as const)('200 concurrent acquires of one key, %s', (_mode, options, expected) => {
  // A server of its own: other tests' limiters renew their leases in the background.
  const quiet = useRedisServer();
  test(`exactly max pass; acquires and releases go out in ${expected} script calls each`, async () => {
    const limiter = createConcurrencyLimiter({
      max: 50,
      store: new RedisStore({ client: quiet.client(), ...options }),
      prefix: fresh(),
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    await (await limiter.acquire('warm')).permit?.release(); // scripts loaded
    const counter = quiet.client();
    const before = await scriptCalls(counter);
    const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.acquire('k')));
    const acquired = (await scriptCalls(counter)) - before;
    expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
    expect(decisions.every((d) => d.degraded === undefined)).toBe(true);
    expect(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.inFlight)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(acquired).toBe(expected);
    const between = await scriptCalls(counter);
    await Promise.all(decisions.map((d) => d.permit?.release()));
    const released = (await scriptCalls(counter)) - between;
    expect(await limiter.inFlight('k')).toBe(0);
    // Only the 50 holders call Redis to release.
    expect(released).toBe('batch' in options ? 50 : MAX_IN_FLIGHT + Math.ceil((50 - MAX_IN_FLIGHT) / 64));
  });
});

describe('concurrency limits when Redis fails', () => {
  /**
   * A client to a port nothing listens on: every call fails at once (no offline queue, no retry).
   * Not the fixture's: disconnecting a client whose connection failed holds the process open 2 s.
   */
  const deadStore = (): RedisStore =>
    new RedisStore({
      client: new Redis({ port: 1, enableOfflineQueue: false, lazyConnect: true, retryStrategy: () => null }),
    });

  const limiterOn = (options: Partial<Parameters<typeof createConcurrencyLimiter>[0]>): ConcurrencyLimiter =>
    createConcurrencyLimiter({ max: 2, store: deadStore(), prefix: fresh(), ...options });

  test('by default each instance counts alone meanwhile (insurance), and gives its permits back', async () => {
    const limiter = limiterOn({});
    const errors: string[] = [];
    limiter.on('storeError', (e) => errors.push(e.mode));
    const decisions = [await limiter.acquire('k'), await limiter.acquire('k'), await limiter.acquire('k')];
    expect(decisions.map((d) => [d.allowed, d.degraded])).toEqual([
      [true, 'insurance'],
      [true, 'insurance'],
      [false, 'insurance'],
    ]);
    expect(errors.length).toBeGreaterThan(0);
    await decisions[0]?.permit?.release();
    expect((await limiter.acquire('k')).allowed).toBe(true);
  });

  test("'fail-closed' refuses with store-unavailable and a Retry-After; 'fail-open' admits uncounted", async () => {
    const closed = await limiterOn({ onStoreError: 'fail-closed' }).acquire('k');
    expect(closed).toMatchObject({ allowed: false, reason: 'store-unavailable', degraded: 'fail-closed' });
    expect(closed.retryAfterMs).toBeGreaterThanOrEqual(1000);
    const open = limiterOn({ onStoreError: 'fail-open', max: 1 });
    const both = [await open.acquire('k'), await open.acquire('k')];
    expect(both.map((d) => [d.allowed, d.degraded])).toEqual([
      [true, 'fail-open'],
      [true, 'fail-open'],
    ]);
    await both[0]?.permit?.release();
    expect(open.stats().inFlight).toBe(1);
  });
});

describe('permits in batches', () => {
  test("a hot key's acquires and releases at once share their runs: each sends its key and its lease id", async () => {
    const prefix = fresh();
    const limiter = createConcurrencyLimiter({ max: 100, store, prefix, timeoutMs: REDIS_TIMEOUT_MS });
    await (await limiter.acquire('hot')).permit?.release(); // scripts loaded on first use
    const monitor = await admin.monitor();
    try {
      // Values each script call sent after its SHA (or text) and key count: its keys and arguments.
      const sent: number[] = [];
      monitor.on('monitor', (_time: string, args: string[]) => {
        const command = String(args[0]).toLowerCase();
        if (command === 'evalsha' || command === 'eval') sent.push(args.length - 3);
      });
      const before = await scriptCalls(admin);
      const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.acquire('hot')));
      expect(decisions.every((decision) => decision.allowed)).toBe(true);
      await Promise.all(decisions.map((decision) => decision.permit?.release()));
      const calls = (await scriptCalls(admin)) - before;
      await until(() => sent.length >= calls, 'MONITOR has shown every script call');
      expect(sent).toHaveLength(calls);
      // An acquire's key and lease id (its run sends max and leaseMs once), a release's key and
      // id, and each call's few values around them: about 2.5 an operation (they were 8: each op
      // its own run of five values; then 3.2, each acquire sending max and leaseMs).
      const perOperation = sent.reduce((sum, n) => sum + n, 0) / 80;
      expect(perOperation).toBeLessThan(3);
    } finally {
      monitor.disconnect();
    }
  });
});

describe('permits in batches, against a model', () => {
  /** Each key's leases after each operation, as the permit scripts define them (nothing expires here). */
  class Model {
    readonly #leases = new Map<string, Set<string>>();
    holding(key: string): string[] {
      return [...this.#of(key)];
    }
    acquire(key: string, max: number, id: string): { acquired: boolean; held: number } {
      const leases = this.#of(key);
      if (leases.size >= max) return { acquired: false, held: leases.size };
      leases.add(id);
      return { acquired: true, held: leases.size };
    }
    release(key: string, id: string): undefined {
      this.#of(key).delete(id);
      return undefined;
    }
    /** Every id is taken back, whatever the count (its request still runs); `lost`: those that had lapsed. */
    renew(key: string, ids: readonly string[]): { held: number; lost: string[] } {
      const leases = this.#of(key);
      const lost = ids.filter((id) => !leases.has(id));
      for (const id of lost) leases.add(id);
      return { held: leases.size, lost };
    }
    #of(key: string): Set<string> {
      let leases = this.#leases.get(key);
      if (leases === undefined) this.#leases.set(key, (leases = new Set()));
      return leases;
    }
  }

  test('acquires, releases and renewals mixed in one batch answer as one by one: the count a call keeps of a key is the count Redis holds', async () => {
    const random = seededRandom(29);
    const prefix = fresh();
    const permits = store.permits();
    const model = new Model();
    const companion = resolvePolicy({ rate: '1/1h' });
    const leaseMs = 60_000;
    const timeoutMs = REDIS_TIMEOUT_MS;
    const rounds = 25;
    let ids = 0;
    const before = await scriptCalls(admin);
    for (let round = 0; round < rounds; round++) {
      // The slot's places taken first, so the 40 operations below queue and leave as one batch.
      const ahead = Array.from({ length: MAX_IN_FLIGHT }, () =>
        store.consume({ prefix: `${prefix}-peek`, key: 'p', policy: companion, cost: 0 }),
      );
      const asked: Array<Promise<unknown>> = [];
      const expected: unknown[] = [];
      for (let op = 0; op < 40; op++) {
        const key = random() < 0.8 ? 'a' : 'b';
        const max = key === 'a' ? 3 : 2;
        const holding = model.holding(key);
        // A lease of the key's, else any id so far (one given back already: it removes nothing).
        const some = (): string =>
          holding.length > 0 && random() < 0.8 ? random.pick(holding) : `t${random.int(1, ids + 1)}`;
        const pick = random();
        if (pick < 0.45) {
          const id = `t${++ids}`;
          expected.push(model.acquire(key, max, id));
          asked.push(permits.acquire({ prefix, key, max, leaseMs, id, timeoutMs }));
        } else if (pick < 0.9) {
          const id = some();
          expected.push(model.release(key, id));
          asked.push(permits.release({ prefix, key, id, timeoutMs }));
        } else {
          // What the key holds and one more, which is taken back whatever the count.
          const renewed = [...new Set([...holding, some()])];
          expected.push(model.renew(key, renewed));
          asked.push(permits.renew({ prefix, key, max, leaseMs, ids: renewed, timeoutMs }));
        }
      }
      await Promise.all(ahead);
      expect({ round, answers: await Promise.all(asked) }).toEqual({ round, answers: expected });
    }
    // Batches, not one call per operation: the peeks and about one call a round.
    expect((await scriptCalls(admin)) - before).toBeLessThan(rounds * (MAX_IN_FLIGHT + 3));
  });
});

describe('permits are never lost to a failing call', () => {
  afterEach(() => jest.useRealTimers());

  test('a lease Redis took after the timeout is given back when its late answer comes', async () => {
    const proxy = await startTcpProxy(redis.server().port);
    try {
      // Its own client, closed here before the proxy: ioredis holds a process open 2 s for a
      // client disconnected after its connection went away.
      const slow = new Redis({ host: '127.0.0.1', port: proxy.port });
      await slow.ping();
      const prefix = fresh();
      const limiter = createConcurrencyLimiter({ max: 1, store: new RedisStore({ client: slow }), prefix });
      await (await limiter.acquire('warm')).permit?.release(); // scripts loaded
      // Its own calls, counted on its connection: other tests' limiters still renew their leases.
      const sent = jest.spyOn(slow, 'sendCommand');
      const scripts = (): number =>
        sent.mock.calls.filter(([command]) => /^eval/.test((command as { name: string }).name)).length;
      proxy.setLatency(150);
      const decision = await limiter.acquire('k');
      expect(decision).toMatchObject({ allowed: true, degraded: 'insurance' });
      const key = store.permits().keyOf({ prefix, key: 'k' });
      // The acquire ran in Redis after all, then its lease was released: two calls, nothing held.
      await until(
        async () => scripts() === 2 && (await admin.exists(key)) === 0,
        'the late lease is released',
      );
      sent.mockRestore();
      await decision.permit?.release();
      slow.disconnect();
    } finally {
      await proxy.close();
    }
  });

  test('a metrics sink that throws: the acquire is decided by onStoreError and the lease Redis took goes back', async () => {
    const prefix = fresh();
    let throwing = false;
    const metrics = {
      limiter: () => ({
        decided: () => undefined,
        storeCall: () => {
          if (throwing) throw new Error('sink down');
        },
        storeError: () => undefined,
        storeUp: () => undefined,
        blockCacheHit: () => undefined,
        leaseCall: () => undefined,
      }),
    };
    const limiter = createConcurrencyLimiter({
      max: 1,
      store,
      prefix,
      timeoutMs: REDIS_TIMEOUT_MS,
      metrics,
    });
    throwing = true;
    const decision = await limiter.acquire('k');
    expect(decision).toMatchObject({ allowed: true, degraded: 'insurance' });
    const key = store.permits().keyOf({ prefix, key: 'k' });
    await until(async () => (await admin.exists(key)) === 0, 'the lease Redis took is given back');
    throwing = false;
    await decision.permit?.release();
    // The store's permit is free for the next request: nothing was left behind.
    const next = await limiter.acquire('k');
    expect(next).toMatchObject({ allowed: true, inFlight: 1 });
    expect(next.degraded).toBeUndefined();
    // A release whose report throws settles, and is retried: the lease does not stay.
    throwing = true;
    await next.permit?.release();
    throwing = false;
    expect(await admin.zcard(key)).toBe(0);
  });

  test('a clock that throws while the circuit is open: no timer throws, nor does a release', async () => {
    const flaky = new Redis({ host: '127.0.0.1', port: redis.server().port });
    await flaky.ping();
    const prefix = fresh();
    const clock = fakeClock();
    let throwing = false;
    fakeTimersOnly();
    const limiter = createConcurrencyLimiter({
      max: 5,
      store: new RedisStore({ client: flaky }),
      prefix,
      leaseMs: 3000,
      clock: () => {
        if (throwing) throw new Error('clock down');
        return clock();
      },
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const held = await limiter.acquire('k');
    flaky.disconnect();
    // Each fails (the connection is closed) and is decided by onStoreError; three open the circuit,
    // which from then on reads the clock.
    const insured = [];
    for (let i = 0; i < FAILURE_THRESHOLD; i++) insured.push(await limiter.acquire('k'));
    expect(insured.map((d) => d.degraded)).toEqual(Array(FAILURE_THRESHOLD).fill('insurance'));
    throwing = true;
    // The renewal's tick asks the circuit first: a throw out of the timer would end the process.
    expect(() => jest.advanceTimersByTime(1000)).not.toThrow();
    // Released from a response's close listener: no throw there either.
    let released: Promise<void> | undefined;
    expect(() => (released = held.permit?.release())).not.toThrow();
    await released;
    for (const decision of insured) await decision.permit?.release();
    throwing = false;
    expect(limiter.stats().inFlight).toBe(0);
  });

  test('a release that fails is retried at the next renewal, not left to hold the permit', async () => {
    const flaky = new Redis({ host: '127.0.0.1', port: redis.server().port });
    await flaky.ping();
    const prefix = fresh();
    fakeTimersOnly();
    const limiter = createConcurrencyLimiter({
      max: 1,
      store: new RedisStore({ client: flaky }),
      prefix,
      leaseMs: 60_000,
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const errors: string[] = [];
    limiter.on('storeError', (e) => errors.push(e.error.message));
    const decision = await limiter.acquire('k');
    flaky.disconnect();
    await decision.permit?.release(); // fails: the connection is closed
    expect(errors).toHaveLength(1);
    const key = store.permits().keyOf({ prefix, key: 'k' });
    expect(await admin.zcard(key)).toBe(1);
    await flaky.connect();
    jest.advanceTimersByTime(20_000);
    await until(async () => (await admin.zcard(key)) === 0, 'the release is retried');
    expect(limiter.stats().inFlight).toBe(0);
    // Nothing left to renew or retry: the timer stops once the retry's answer is in.
    await until(() => jest.getTimerCount() === 0, 'the renewal timer stops');
    flaky.disconnect();
  });
});

describe('a queue on Redis hands over only permits that still count', () => {
  test('a lease Redis lost (its key deleted) still counts here: taken back at the next renewal, and handed to the next waiter', async () => {
    const prefix = fresh();
    const limiter = createConcurrencyLimiter({
      max: 1,
      store,
      prefix,
      leaseMs: 300,
      timeoutMs: REDIS_TIMEOUT_MS,
      queue: { maxWaitMs: 10_000 },
    });
    const lost: string[] = [];
    limiter.on('leaseLost', ({ key }) => lost.push(key));
    const holder = await limiter.acquire('k');
    const waiter = limiter.acquire('k');
    await until(() => limiter.stats().queued === 1, 'the second waits');
    const key = store.permits().keyOf({ prefix, key: 'k' });
    // Redis forgets the lease; another instance (a store of its own) takes the place meanwhile.
    await admin.del(key);
    const other = createConcurrencyLimiter({
      max: 1,
      store: new RedisStore({ client }),
      prefix,
      leaseMs: 300,
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    const taken = await other.acquire('k');
    expect(taken.allowed).toBe(true);
    // The holder's request still runs: its renewal takes the lease back beside the other's.
    await until(() => lost.length === 1, 'the lease is taken back and reported');
    expect(await admin.zcard(key)).toBe(2);
    expect(limiter.stats()).toEqual({ inFlight: 1, queued: 1 });
    // Released here, it goes to the waiter: this process still runs one of the key.
    await holder.permit?.release();
    const served = await waiter;
    expect(served).toMatchObject({ allowed: true, inFlight: 1 });
    expect(served.degraded).toBeUndefined();
    expect(await admin.zcard(key)).toBe(2);
    await taken.permit?.release();
    await served.permit?.release();
    expect(await admin.exists(key)).toBe(0);
  });

  test('an insurance permit is not handed over once Redis answers again: the waiter asks Redis', async () => {
    const proxy = await startTcpProxy(redis.server().port);
    const slow = new Redis({ host: '127.0.0.1', port: proxy.port });
    try {
      await slow.ping();
      const prefix = fresh();
      const a = createConcurrencyLimiter({
        max: 1,
        store: new RedisStore({ client: slow }),
        prefix,
        timeoutMs: 100,
        queue: { maxWaitMs: 10_000 },
      });
      await (await a.acquire('warm')).permit?.release(); // scripts loaded
      const b = createConcurrencyLimiter({ max: 1, store, prefix, timeoutMs: REDIS_TIMEOUT_MS });
      proxy.setBlackhole(true);
      const insured = await a.acquire('k');
      expect(insured).toMatchObject({ allowed: true, degraded: 'insurance' });
      proxy.setBlackhole(false);
      // The acquire held back lands now, and its lease is given back when its late answer comes:
      // the ping's answer follows the acquire's, then the release is done.
      await slow.ping();
      const key = store.permits().keyOf({ prefix, key: 'k' });
      await until(async () => (await admin.zcard(key)) === 0, 'the late lease is given back');
      const real = await b.acquire('k'); // Redis counts this one
      expect(real).toMatchObject({ allowed: true });
      const waiting = a.acquire('k');
      await until(() => a.stats().queued === 1, 'the second waits');
      await insured.permit?.release();
      // The store is back: the insurance permit goes back, and the waiter waits for Redis's place.
      expect(a.stats().queued).toBe(1);
      await real.permit?.release();
      const served = await waiting;
      expect(served.allowed).toBe(true);
      expect(served.degraded).toBeUndefined();
      await served.permit?.release();
    } finally {
      slow.disconnect();
      await proxy.close();
    }
  });

  test("'fail-closed': waiters are refused with store-unavailable once Redis stops answering, not at maxWaitMs", async () => {
    const proxy = await startTcpProxy(redis.server().port);
    const slow = new Redis({ host: '127.0.0.1', port: proxy.port });
    try {
      await slow.ping();
      const limiter = createConcurrencyLimiter({
        max: 1,
        store: new RedisStore({ client: slow }),
        prefix: fresh(),
        timeoutMs: 100,
        onStoreError: 'fail-closed',
        queue: { maxWaitMs: 30_000 },
      });
      const holder = await limiter.acquire('k');
      const started = performance.now();
      const waiter = limiter.acquire('k');
      await until(() => limiter.stats().queued === 1, 'the second waits');
      proxy.setBlackhole(true);
      const refused = await waiter;
      expect(refused).toMatchObject({ allowed: false, reason: 'store-unavailable', degraded: 'fail-closed' });
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(limiter.stats().queued).toBe(0);
      proxy.setBlackhole(false);
      await holder.permit?.release();
    } finally {
      slow.disconnect();
      await proxy.close();
    }
  });
});
