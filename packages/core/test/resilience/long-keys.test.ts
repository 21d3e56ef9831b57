import { createLimiter, MemoryStore, type StoreRequest } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { BlockCache, type Rejection } from '../../src/resilience/block-cache';
import { leasing } from '../../src/resilience/token-lease';
import { fakeClock } from '../contract/fake-clock';
import { heapUsed, longKey, MB, slicedKey } from '../harness/heap';
import { FlakyStore, noOutage } from './flaky-store';

// Issue 16 item 6: every in-process structure that keeps key text holds a long key by its
// digest and a short one by its own copy, so hostile keys cannot grow the heap past the bounds
// the README states (each figure below is that bound).

const KEYS = 20_000;

describe('long keys in the resilience layer', () => {
  test('the insurance store, deciding 20 000 distinct 15 kB keys while the store is down: under 256 bytes a key', async () => {
    const store = new FlakyStore();
    store.mode = 'throw';
    const insurance = new MemoryStore();
    const limiter = createLimiter({ rate: '1/1m', store, clock: fakeClock(), onStoreError: { insurance } });
    const before = heapUsed();
    for (let i = 0; i < KEYS; i++) {
      const decision = await limiter.consume(longKey(i));
      if (decision.degraded !== 'insurance') throw new Error('expected the insurance store to decide');
    }
    const grown = heapUsed() - before;
    expect(await limiter.consume(longKey(7))).toMatchObject({
      allowed: false,
      degraded: 'insurance',
      key: longKey(7),
    });
    expect(insurance.size).toBe(KEYS);
    expect(grown / KEYS).toBeLessThan(256);
  }, 30_000);

  describe('block cache', () => {
    const policy = resolvePolicy({ rate: '1/1m' });
    const tag = {};
    const rejection: Rejection = { limit: 1, retryAfterMs: 60_000, resetMs: 60_000, policy };

    test.each([
      ['15 kB keys', longKey],
      ['short keys cut out of 15 kB strings', slicedKey],
    ])('20 000 distinct %s: at its default 10 000 keys, under 4 MB', (_, key) => {
      const cache = new BlockCache(10_000);
      const before = heapUsed();
      for (let i = 0; i < KEYS; i++) cache.remember(key(i), 1, 0, rejection, tag);
      const grown = heapUsed() - before;
      expect(cache.find(key(KEYS - 1), 1, 1, tag)).toMatchObject({ until: 60_000, cost: 1 });
      expect(grown).toBeLessThan(4 * MB);
    });

    test('a long key is blocked, forgotten and told apart from another like it by its text', () => {
      const cache = new BlockCache(10);
      cache.remember(longKey(1), 2, 0, rejection, tag);
      expect(cache.find(longKey(1), 2, 1, tag)).toBeDefined();
      expect(cache.find(longKey(2), 2, 1, tag)).toBeUndefined();
      cache.forget(longKey(1));
      expect(cache.find(longKey(1), 2, 1, tag)).toBeUndefined();
    });
  });

  test('the lease maps, 20 000 distinct 15 kB keys (half leased, half refused): under 8 MB', async () => {
    // The remote is an in-process store holding one key: only the lease maps hold the others.
    const store = new MemoryStore({ maxKeys: 1 });
    const remote = (request: StoreRequest) => Promise.resolve(store.consumeSync(request));
    const consume = leasing(remote, 5, 60_000, fakeClock(), noOutage);
    const policy = resolvePolicy({ algorithm: 'fixed-window', rate: '5/1m' });
    const request = (key: string, cost: number): StoreRequest => ({
      prefix: 'p',
      key,
      policy,
      cost,
      nowMs: 0,
    });
    const before = heapUsed();
    for (let i = 0; i < KEYS; i += 2) {
      // A lease of 5: one unit spent, four left locally.
      expect((await consume(request(longKey(i), 1))).allowed).toBe(true);
      // All five at once, then a refusal the lease remembers.
      expect((await consume(request(longKey(i + 1), 5))).allowed).toBe(true);
      expect((await consume(request(longKey(i + 1), 1))).allowed).toBe(false);
    }
    const grown = heapUsed() - before;
    // Both maps are still in use: the first key's local units, the last key's refusal.
    expect(await consume(request(longKey(0), 4))).toMatchObject({ allowed: true, remaining: 0 });
    expect(await consume(request(longKey(KEYS - 1), 1))).toMatchObject({ allowed: false, reason: 'limited' });
    expect(grown).toBeLessThan(8 * MB);
  }, 30_000);
});
