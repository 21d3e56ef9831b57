import type Redis from 'ioredis';
import { RedisStore, type Receipt } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { commandCalls } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';
import { logKeepMs } from './expiry-check';

// Every log here is a sorted set, whatever its limit (a limit up to PACKED_LOG_MAX is otherwise
// kept as one string: redis-packed-log.test.ts): the sorted set's Lua is the same at any limit.
jest.mock('../../src/stores/redis/scripts/packed-log.lua', () => ({
  ...jest.requireActual<object>('../../src/stores/redis/scripts/packed-log.lua'),
  PACKED_LOG_MAX: 0,
}));

/**
 * The sliding log on Redis trims and sets its expiry only at the first admission of each
 * window-long span of time (see `sliding-log.lua.ts`): the other admissions add their entry and
 * nothing else. What that must not cost: entries without bound, or a key expiring while an entry
 * still counts. (That every decision equals the reference's is redis-differential's.)
 */
const redis = useRedisServer();
let client: Redis;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
});

const WINDOW_MS = 1000;
const policy = resolvePolicy({ algorithm: 'sliding-log', rate: { limit: 50, window: WINDOW_MS } });
const wide = resolvePolicy({ algorithm: 'sliding-log', rate: { limit: 1000, window: 60_000 } });

describe.each([
  ['batch on', true],
  ['batch: false', false],
] as const)('sliding log on Redis (%s)', (_name, batch) => {
  test("after the first admission of a span, the span's admissions run ZRANGE, ZCARD, ZCOUNT and ZADD only", async () => {
    const store = new RedisStore({ client, batch });
    const prefix = `log-${++sequence}`;
    const key = store.keyOf({ prefix, key: 'k', policy });
    // A span starts at a multiple of the window: the first admission there trims and sets the expiry.
    const spanStart = FAKE_EPOCH - (FAKE_EPOCH % WINDOW_MS) + 10 * WINDOW_MS;
    await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs: spanStart - 10 });
    await client.config('RESETSTAT');
    await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs: spanStart + 5 });
    let calls = await commandCalls(client);
    expect([calls.zremrangebyscore, calls.pexpire, calls.zadd]).toEqual([1, 1, 1]);
    expect(await client.pttl(key)).toBeGreaterThan(logKeepMs(spanStart + 5, spanStart + 5, WINDOW_MS) - 100);

    await client.config('RESETSTAT');
    for (let i = 1; i <= 20; i++) {
      const verdict = await store.consume({
        prefix,
        key: 'k',
        policy,
        cost: 1,
        nowMs: spanStart + 5 + 40 * i,
      });
      expect(verdict.allowed).toBe(true);
    }
    calls = await commandCalls(client);
    expect(calls).toMatchObject({ zrange: 20, zcard: 20, zcount: 20, zadd: 20 });
    expect([calls.zremrangebyscore, calls.pexpire, calls.zrangebyscore]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    // Set at the span's first admission, to the end of the next span: past every entry of this one.
    const ttl = await client.pttl(key);
    expect(ttl).toBeGreaterThan(WINDOW_MS);
    expect(ttl).toBeLessThanOrEqual(2 * WINDOW_MS);
  });

  test('a key idle for a window: its entries have all left, seen without a ZCARD or a ZCOUNT', async () => {
    const store = new RedisStore({ client, batch });
    const prefix = `log-${++sequence}`;
    const key = store.keyOf({ prefix, key: 'k', policy });
    for (const nowMs of [FAKE_EPOCH, FAKE_EPOCH + 10, FAKE_EPOCH + 20])
      await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs });
    await client.config('RESETSTAT');
    const verdict = await store.consume({
      prefix,
      key: 'k',
      policy,
      cost: 1,
      nowMs: FAKE_EPOCH + 20 + WINDOW_MS,
    });
    expect(verdict).toMatchObject({ allowed: true, remaining: policy.limit - 1 });
    const calls = await commandCalls(client);
    expect(calls).toMatchObject({ zrange: 1, zremrangebyscore: 1, zadd: 1, pexpire: 1 });
    expect([calls.zcard, calls.zcount]).toEqual([undefined, undefined]);
    expect(await client.zrange(key, 0, -1)).toEqual([`${FAKE_EPOCH + 20 + WINDOW_MS}:0`]);
  });

  test('64 requests in one millisecond on one key: 64 names, none read back', async () => {
    const store = new RedisStore({ client, batch });
    const prefix = `log-${++sequence}`;
    const key = store.keyOf({ prefix, key: 'hot', policy: wide });
    await client.config('RESETSTAT');
    const verdicts = await Promise.all(
      Array.from({ length: 64 }, () =>
        store.consume({ prefix, key: 'hot', policy: wide, cost: 1, nowMs: FAKE_EPOCH }),
      ),
    );
    expect(verdicts.every((v) => v.allowed)).toBe(true);
    const names = await client.zrange(key, 0, -1);
    expect(new Set(names)).toEqual(new Set(Array.from({ length: 64 }, (_, i) => `${FAKE_EPOCH}:${i}`)));
    expect((await commandCalls(client)).zrangebyscore).toBeUndefined();
  });

  test('a give-back below the highest name of a millisecond: the next admissions take names not in use', async () => {
    const store = new RedisStore({ client, batch });
    const part = { prefix: `log-${++sequence}`, key: 'k', policies: [wide] };
    const key = store.keyOf({ prefix: part.prefix, key: 'k', policy: wide });
    const receipts = [];
    for (let i = 0; i < 3; i++) {
      const taken = await store.consumeAll([{ ...part, cost: 1, nowMs: FAKE_EPOCH }]);
      receipts.push(taken.receipts[0]?.[0]);
    }
    expect(receipts.map((r) => r?.member)).toEqual([0, 1, 2]);
    await store.giveBackTaken({ ...part, cost: 1, nowMs: FAKE_EPOCH }, [receipts[1] as Receipt]);
    for (let i = 0; i < 2; i++) await store.consume({ ...part, policy: wide, cost: 1, nowMs: FAKE_EPOCH });
    expect((await client.zrange(key, 0, -1)).sort()).toEqual(
      [0, 2, 3, 4].map((member) => `${FAKE_EPOCH}:${member}`).sort(),
    );
  });

  test('steady admissions over twenty windows: the log never holds entries of more than two windows', async () => {
    const store = new RedisStore({ client, batch });
    const prefix = `log-${++sequence}`;
    const key = store.keyOf({ prefix, key: 'k', policy });
    let most = 0;
    for (let nowMs = FAKE_EPOCH; nowMs < FAKE_EPOCH + 20 * WINDOW_MS; nowMs += 25) {
      const verdict = await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs });
      expect(verdict.allowed).toBe(true); // 40 per window, under the limit of 50
      const scores = (await client.zrange(key, 0, -1, 'WITHSCORES'))
        .filter((_, i) => i % 2 === 1)
        .map(Number);
      // None before the window before this span: what the span's first admission trimmed.
      expect(Math.min(...scores)).toBeGreaterThan(nowMs - (nowMs % WINDOW_MS) - WINDOW_MS);
      most = Math.max(most, scores.length);
    }
    expect(most).toBeGreaterThan(40); // dead entries were kept a while: the trims were fewer
    expect(most).toBeLessThanOrEqual(80);
  });
});
