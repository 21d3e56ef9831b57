import type Redis from 'ioredis';
import {
  createLimiter,
  MemoryStore,
  RedisStore,
  type Decision,
  type Limiter,
  type LimiterOptions,
  type Store,
} from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { PACKED_LOG_MAX } from '../../src/stores/redis/scripts/packed-log.lua';
import { FAKE_EPOCH, fakeClock } from '../contract/fake-clock';
import { commandCalls } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';
import { logKeepMs } from './expiry-check';
import { unpackLog } from './packed-state';
import { seededRandom } from './seeded-random';

/**
 * A sliding log whose limit is at most PACKED_LOG_MAX is one string on Redis: a base time, then
 * its entries' times less it (see `packed-log.lua.ts`). The first admission of each window-long
 * span writes the live entries whole with the expiry of the next span's end; the span's other
 * admissions append their entries. What that must not cost: entries without bound, a key
 * expiring while an entry still counts, or a decision other than the reference's, on either side
 * of the threshold. (Every decision and live entry against the reference, step by step, is
 * redis-differential's.)
 */
const redis = useRedisServer();
let client: Redis;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
});

const WINDOW_MS = 1000;
const policy = resolvePolicy({ algorithm: 'sliding-log', rate: { limit: 50, window: WINDOW_MS } });

describe.each([
  ['batch on', true],
  ['batch: false', false],
] as const)('packed sliding log on Redis (%s)', (_name, batch) => {
  test("the span's first admission writes the log with its expiry, the span's others append", async () => {
    const store = new RedisStore({ client, batch });
    const prefix = `packed-${++sequence}`;
    const key = store.keyOf({ prefix, key: 'k', policy });
    const spanStart = FAKE_EPOCH - (FAKE_EPOCH % WINDOW_MS) + 10 * WINDOW_MS;
    await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs: spanStart - 10 });
    await client.config('RESETSTAT');
    await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs: spanStart + 5 });
    let calls = await commandCalls(client);
    expect([calls.get, calls.psetex, calls.append]).toEqual([1, 1, undefined]);
    expect(await client.type(key)).toBe('string');
    expect(await client.pttl(key)).toBeGreaterThan(logKeepMs(spanStart + 5, spanStart + 5, WINDOW_MS) - 100);

    await client.config('RESETSTAT');
    for (let i = 1; i <= 20; i++) {
      const nowMs = spanStart + 5 + 40 * i;
      expect((await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs })).allowed).toBe(true);
    }
    calls = await commandCalls(client);
    expect([calls.get, calls.append, calls.psetex, calls.set]).toEqual([20, 20, undefined, undefined]);
    expect(Object.keys(calls).filter((name) => name.startsWith('z'))).toEqual([]);
    expect(unpackLog((await client.getBuffer(key)) as Buffer)).toEqual([
      spanStart - 10,
      ...Array.from({ length: 21 }, (_, i) => spanStart + 5 + 40 * i),
    ]);
    const ttl = await client.pttl(key);
    expect(ttl).toBeGreaterThan(WINDOW_MS);
    expect(ttl).toBeLessThanOrEqual(2 * WINDOW_MS);
  });

  test('steady admissions over twenty windows: the log never holds entries of more than two windows', async () => {
    const store = new RedisStore({ client, batch });
    const prefix = `packed-${++sequence}`;
    const key = store.keyOf({ prefix, key: 'k', policy });
    let most = 0;
    for (let nowMs = FAKE_EPOCH; nowMs < FAKE_EPOCH + 20 * WINDOW_MS; nowMs += 25) {
      const verdict = await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs });
      expect(verdict.allowed).toBe(true); // 40 per window, under the limit of 50
      const times = unpackLog((await client.getBuffer(key)) as Buffer) ?? [];
      // None before the window before this span: what the span's first admission trimmed.
      expect(Math.min(...times)).toBeGreaterThan(nowMs - (nowMs % WINDOW_MS) - WINDOW_MS);
      most = Math.max(most, times.length);
    }
    expect(most).toBeGreaterThan(40); // entries that left were kept a while: writes were appends
    expect(most).toBeLessThanOrEqual(80);
  });

  test('64 requests in one millisecond on one key: 64 entries, and the 65th refused', async () => {
    const store = new RedisStore({ client, batch });
    const prefix = `packed-${++sequence}`;
    const wide = resolvePolicy({ algorithm: 'sliding-log', rate: { limit: 64, window: 60_000 } });
    const ask = () => store.consume({ prefix, key: 'hot', policy: wide, cost: 1, nowMs: FAKE_EPOCH });
    const verdicts = await Promise.all(Array.from({ length: 65 }, ask));
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(64);
    const key = store.keyOf({ prefix, key: 'hot', policy: wide });
    expect(unpackLog((await client.getBuffer(key)) as Buffer)).toEqual(
      Array.from({ length: 64 }, () => FAKE_EPOCH),
    );
  });
});

describe.each([
  ['batch on', true],
  ['batch: false', false],
] as const)('a probe on a packed sliding log (%s)', (_name, batch) => {
  test('decided at its cost, never written: admitted while an entry is left, refused once none is', async () => {
    const store = new RedisStore({ client, batch });
    const prefix = `probe-${++sequence}`;
    const small = resolvePolicy({ algorithm: 'sliding-log', rate: { limit: 3, window: 60_000 } });
    const key = store.keyOf({ prefix, key: 'k', policy: small });
    const part = { prefix, key: 'k', policies: [small], cost: 1, nowMs: FAKE_EPOCH, probe: true };
    // Alike probes asked together: in a batch, one run whose parts are sent once.
    const probes = () => Promise.all(Array.from({ length: 5 }, () => store.consumeAll([part])));
    for (const { verdicts, receipts } of await probes()) {
      expect(verdicts[0]?.[0]).toMatchObject({ allowed: true, remaining: 3 });
      expect(receipts[0]).toBeUndefined();
    }
    expect(await client.exists(key)).toBe(0);
    for (let i = 0; i < 3; i++)
      await store.consume({ prefix, key: 'k', policy: small, cost: 1, nowMs: FAKE_EPOCH });
    const full = await client.getBuffer(key);
    for (const { verdicts } of await probes())
      expect(verdicts[0]?.[0]).toMatchObject({ allowed: false, remaining: 0 });
    expect(await client.getBuffer(key)).toEqual(full);
  });
});

describe('a sliding log across PACKED_LOG_MAX', () => {
  test('a limit up to it is one string, a larger one a sorted set', async () => {
    const store = new RedisStore({ client });
    const prefix = `packed-${++sequence}`;
    for (const [limit, type] of [
      [PACKED_LOG_MAX, 'string'],
      [PACKED_LOG_MAX + 1, 'zset'],
    ] as const) {
      const at = resolvePolicy({ algorithm: 'sliding-log', rate: { limit, window: '1m' } });
      await store.consume({ prefix, key: 'k', policy: at, cost: limit, nowMs: FAKE_EPOCH });
      expect(await client.type(store.keyOf({ prefix, key: 'k', policy: at }))).toBe(type);
    }
  });

  /** Decides like MemoryStore, whichever form each key's limit gives it. */
  test("an override that moves a key's limit across it decides as the in-memory store does", async () => {
    const overrides = new Map<string, string>();
    const options: Omit<LimiterOptions, 'store' | 'clock' | 'prefix'> = {
      algorithm: 'sliding-log',
      rate: `${PACKED_LOG_MAX}/1m`,
      overrides,
      onStoreError: 'fail-closed',
      timeoutMs: 10_000,
      // Each refusal the store's: the block cache answers a refused key itself until it may pass.
      blockCache: false,
    };
    const make = (store: Store, clock: () => number): Limiter =>
      createLimiter({ ...options, store, clock, prefix: `across-${++sequence}` });
    const clocks = [fakeClock(), fakeClock()];
    const [memory, onRedis] = [
      make(new MemoryStore(), clocks[0] as () => number),
      make(new RedisStore({ client }), clocks[1] as () => number),
    ] as [Limiter, Limiter];
    const random = seededRandom(7);
    const rates = [undefined, `${PACKED_LOG_MAX + 1}/1m`, '3/1s', `${2 * PACKED_LOG_MAX}/2m`];
    const mismatches: object[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < 600; i++) {
      if (i % 50 === 0) {
        // Move each key to another rate now and then: another form, and another namespace.
        for (const key of ['a', 'b']) {
          const rate = random.pick(rates);
          if (rate === undefined) overrides.delete(key);
          else overrides.set(key, rate);
        }
      }
      const step = random.int(0, 400);
      for (const clock of clocks) clock.advance(step);
      const key = random.pick(['a', 'b', 'c']);
      const cost = random() < 0.8 ? 1 : random.int(0, 300);
      const [m, r] = await Promise.all([memory.consume(key, { cost }), onRedis.consume(key, { cost })]);
      const strip = ({ key: _key, ...rest }: Decision) => rest;
      if (JSON.stringify(strip(m)) !== JSON.stringify(strip(r))) mismatches.push({ i, key, cost, m, r });
      seen.add(`${m.policy.limit > PACKED_LOG_MAX ? 'zset' : 'string'}:${m.allowed}`);
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
    expect([...seen].sort()).toEqual(['string:false', 'string:true', 'zset:false', 'zset:true']);
  });
});

describe('state of another version of sluice', () => {
  test('the keys of an older format are not read, nor touched: the new ones start afresh', async () => {
    const store = new RedisStore({ client });
    const prefix = `older-${++sequence}`;
    const log = resolvePolicy({ algorithm: 'sliding-log', rate: '2/1h' });
    const gcra = resolvePolicy({ algorithm: 'gcra', rate: '2/1h' });
    // What an older version left: a full sorted set at the log's old key, a gcra state of two
    // doubles (no expiry stored) at gcra's.
    const oldLog = `${prefix}:{k}:sliding-log`;
    const oldGcra = `${prefix}:{k}:gcra`;
    await client.zadd(oldLog, FAKE_EPOCH - 1, `${FAKE_EPOCH - 1}:0`, FAKE_EPOCH - 1, `${FAKE_EPOCH - 1}:1`);
    const oldGcraValue = Buffer.alloc(16);
    oldGcraValue.writeDoubleLE(FAKE_EPOCH - 1, 0);
    oldGcraValue.writeDoubleLE(2 * 3_600_000, 8);
    await client.set(oldGcra, oldGcraValue, 'PX', 3_600_000);
    const before = [await client.zrange(oldLog, 0, -1, 'WITHSCORES'), await client.getBuffer(oldGcra)];

    for (const policy of [log, gcra]) {
      expect(store.keyOf({ prefix, key: 'k', policy })).not.toBe(policy === log ? oldLog : oldGcra);
      const verdict = await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs: FAKE_EPOCH });
      expect(verdict).toMatchObject({ allowed: true, remaining: 1 });
    }
    // The older version, still running beside this one during a deploy, finds its state intact.
    expect([await client.zrange(oldLog, 0, -1, 'WITHSCORES'), await client.getBuffer(oldGcra)]).toEqual(
      before,
    );
  });
});
