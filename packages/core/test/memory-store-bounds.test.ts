import { createLimiter, MemoryStore } from '../src';
import { fakeClock } from './contract/fake-clock';
import { heapUsed, longKey, MB, slicedKey } from './harness/heap';

describe('MemoryStore bounds', () => {
  test('1 000 000 distinct keys: never more than maxKeys held, heap under 16 MB', async () => {
    const store = new MemoryStore(); // default maxKeys: 100 000
    const clock = fakeClock();
    const limiter = createLimiter({ rate: '10r/s', burst: 5, store, clock });
    const before = heapUsed();
    let maxSize = 0;
    for (let i = 0; i < 1_000_000; i++) {
      store.consumeSync({
        prefix: 'sluice',
        key: `203.0.113.${i}`,
        policy: limiter.policy,
        cost: 1,
        nowMs: clock(),
      });
      if ((i & 1023) === 0) maxSize = Math.max(maxSize, store.size);
    }
    maxSize = Math.max(maxSize, store.size);
    const grown = heapUsed() - before;
    expect(store.maxKeys).toBe(100_000);
    expect(maxSize).toBe(100_000);
    expect(grown).toBeLessThan(16 * 1024 * 1024);
    // Keys seen once are evicted in turn: the newest are still limited, the oldest start fresh.
    expect((await limiter.consume('203.0.113.999999', { cost: 6 })).allowed).toBe(false);
    expect((await limiter.consume('203.0.113.0', { cost: 6 })).allowed).toBe(true);
  });

  test('heap per key stays near the documented ~45 bytes plus the key text', () => {
    const store = new MemoryStore({ maxKeys: 200_000 });
    const policy = createLimiter({ rate: '10r/s' }).policy;
    const before = heapUsed();
    for (let i = 0; i < 200_000; i++)
      store.consumeSync({ prefix: 'p', key: `k${i}`, policy, cost: 1, nowMs: 1 });
    const perKey = (heapUsed() - before) / 200_000;
    expect(store.size).toBe(200_000);
    expect(perKey).toBeLessThan(45 + 40); // the key strings `k0`…`k199999` included
  });

  test('an access refreshes a key, so a busy key is not evicted by a flood of new ones', async () => {
    const store = new MemoryStore({ maxKeys: 3 });
    const clock = fakeClock();
    const limiter = createLimiter({ rate: '1r/m', store, clock });
    await limiter.consume('busy');
    for (let i = 0; i < 10; i++) {
      expect((await limiter.consume('busy')).allowed).toBe(false); // touched: most recently used
      await limiter.consume(`new-${i}`);
      expect(store.size).toBeLessThanOrEqual(3);
    }
  });

  test('an idle key is fresh once expired, and expired keys make room first', async () => {
    const store = new MemoryStore({ maxKeys: 200 });
    const clock = fakeClock();
    const limiter = createLimiter({ rate: '1r/s', store, clock });
    for (let i = 0; i < 100; i++) await limiter.consume(`idle-${i}`);
    expect((await limiter.consume('idle-0')).allowed).toBe(false);
    clock.advance(1000); // every key is full again: its state is no longer needed
    expect(await limiter.consume('idle-1')).toMatchObject({ allowed: true, remaining: 0 });
    for (let i = 0; i < 199; i++) await limiter.consume(`fresh-${i}`);
    expect(store.size).toBe(200);
    // the 99 expired keys gave their slots: every fresh key and idle-1 are still held
    for (const key of ['idle-1', 'fresh-0', 'fresh-100', 'fresh-198'])
      expect((await limiter.consume(key)).allowed).toBe(false);
    await store.reset({ prefix: 'sluice', key: 'fresh-198', policy: limiter.policy });
    expect((await limiter.consume('fresh-198')).allowed).toBe(true);
  });

  test('forgotten counts the keys evicted while their state was live, not expired slots reused', async () => {
    const store = new MemoryStore({ maxKeys: 100 });
    const clock = fakeClock();
    const limiter = createLimiter({ rate: '1r/s', store, clock });
    for (let i = 0; i < 100; i++) await limiter.consume(`old-${i}`);
    clock.advance(1000); // every state has ended: their slots make room for free
    for (let i = 0; i < 100; i++) await limiter.consume(`new-${i}`);
    expect([store.size, store.forgotten]).toEqual([100, 0]);
    // Now every held key is live: each newcomer takes a live key's slot.
    for (let i = 0; i < 30; i++) await limiter.consume(`more-${i}`);
    expect([store.size, store.forgotten]).toEqual([100, 30]);
  });

  test('maxKeys: 1 holds one key', async () => {
    const store = new MemoryStore({ maxKeys: 1 });
    const limiter = createLimiter({ rate: '1r/m', store, clock: fakeClock() });
    for (const key of ['a', 'b', 'c', 'a']) {
      await limiter.consume(key);
      expect(store.size).toBe(1);
    }
    expect((await limiter.consume('a')).allowed).toBe(false);
  });

  describe('long keys cost what short ones do (issue 16 item 6)', () => {
    test('20 000 distinct 15 kB keys: the heap grows by under 256 bytes a key, each still limited', async () => {
      const store = new MemoryStore();
      const limiter = createLimiter({ rate: '1/1m', store, clock: fakeClock() });
      const before = heapUsed();
      for (let i = 0; i < 20_000; i++) await limiter.consume(longKey(i));
      const grown = heapUsed() - before;
      // The limiter is used after measuring, so it and its store are reachable while measured.
      expect(await limiter.consume(longKey(7))).toMatchObject({ allowed: false, key: longKey(7) });
      expect(store.size).toBe(20_000);
      expect(grown / 20_000).toBeLessThan(256); // 15 kB a key before
    });

    test('20 000 distinct short keys cut out of 15 kB strings do not keep those strings alive', async () => {
      const store = new MemoryStore();
      const limiter = createLimiter({ rate: '1/1m', store, clock: fakeClock() });
      const before = heapUsed();
      for (let i = 0; i < 20_000; i++) await limiter.consume(slicedKey(i));
      const grown = heapUsed() - before;
      expect(await limiter.consume(slicedKey(7))).toMatchObject({ allowed: false, key: slicedKey(7) });
      expect(store.size).toBe(20_000);
      expect(grown / 20_000).toBeLessThan(256);
    });

    // The README's bounds of the default store, at the steady state of a flood (the index has
    // grown for the keys evicted): 16 MB for Latin-1 keys, every key longer than 42 characters
    // included (held by a 43-character digest); 20 MB whatever the keys.
    const flood = (key: (i: number) => string): number => {
      const store = new MemoryStore();
      const { policy } = createLimiter({ rate: '10r/s' });
      const before = heapUsed();
      for (let i = 0; i < 300_000; i++)
        store.consumeSync({ prefix: 'p', key: key(i), policy, cost: 1, nowMs: 1 });
      const grown = heapUsed() - before;
      expect(store.size).toBe(100_000);
      return grown;
    };

    test('300 000 distinct 200-character keys: the default store stays under 16 MB', () => {
      const pad = 'k'.repeat(190);
      // One flat string each, as keys read from requests are.
      expect(flood((i) => [pad, String(i).padStart(10, '0')].join(''))).toBeLessThan(16 * MB);
    });

    test('300 000 distinct 42-character keys beyond Latin-1, cut out of longer strings: under 20 MB', () => {
      const pad = '\u0100'.repeat(1000);
      expect(
        flood((i) => {
          const text = `${pad}${String(i).padStart(10, '0')}${'\u0101'.repeat(32)}`;
          return text.slice(text.length - 42);
        }),
      ).toBeLessThan(20 * MB);
    });
  });
});
