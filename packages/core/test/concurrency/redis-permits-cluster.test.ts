import type Redis from 'ioredis';
import { createConcurrencyLimiter, RedisStore, type ConcurrencyDecision } from '../../src';
import { useRedisCluster } from '../harness/redis-fixtures';
import { HOSTILE_KEYS } from '../redis/redis-store-behaviour';

const redis = useRedisCluster();
let store: RedisStore;
let masters: Redis[];

beforeAll(async () => {
  store = new RedisStore({ client: await redis.client() });
  masters = redis.masters();
});

test('on Redis Cluster each key is counted on the master of its escaped hash tag, whatever it holds', async () => {
  const limiter = createConcurrencyLimiter({ max: 2, store, prefix: 'conc-cluster', timeoutMs: 5000 });
  const keys = [...HOSTILE_KEYS, ...Array.from({ length: 30 }, (_, i) => `user:${i}`)];
  const held: ConcurrencyDecision[] = [];
  for (const key of keys) {
    const decisions = [await limiter.acquire(key), await limiter.acquire(key), await limiter.acquire(key)];
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
    held.push(...decisions);
  }
  // Spread over every master: a Cluster test only if the sets really land on all three.
  const perMaster = await Promise.all(
    masters.map(async (master) => (await master.keys('conc-cluster:*')).length),
  );
  expect(perMaster.reduce((sum, n) => sum + n, 0)).toBe(new Set(keys).size);
  for (const count of perMaster) expect(count).toBeGreaterThan(0);
  await Promise.all(held.map((d) => d.permit?.release()));
  for (const key of keys) expect(await limiter.inFlight(key)).toBe(0);
});

test('acquires at once on keys of every master: exactly max per key, in arrival order per slot, and every permit comes back', async () => {
  const limiter = createConcurrencyLimiter({ max: 4, store, prefix: 'conc-cluster-batch', timeoutMs: 5000 });
  const keys = [...HOSTILE_KEYS, ...Array.from({ length: 30 }, (_, i) => `user:${i}`)];
  // Six acquires per key, all at once: past the slot's places in flight, each slot's queue and
  // go out together (the batch script, which counts the leases taken before in the same call),
  // never with another slot's.
  const decisions = await Promise.all(
    keys.flatMap((key) => Array.from({ length: 6 }, () => limiter.acquire(key))),
  );
  expect(decisions.every((d) => d.degraded === undefined)).toBe(true);
  for (const [i, key] of keys.entries()) {
    const mine = decisions.slice(6 * i, 6 * i + 6);
    expect({ key, allowed: mine.map((d) => d.allowed), held: mine.map((d) => d.inFlight) }).toEqual({
      key,
      allowed: [true, true, true, true, false, false],
      held: [1, 2, 3, 4, 4, 4],
    });
  }
  await Promise.all(decisions.map((d) => d.permit?.release()));
  for (const key of keys) expect(await limiter.inFlight(key)).toBe(0);
});
