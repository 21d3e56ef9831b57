import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createLimiter, MemoryStore } from '../src';
import { fakeClock } from './contract/fake-clock';

// A real gc() inside jest, so heap figures are measured, not guessed.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

describe('MemoryStore bounds', () => {
  test('1 000 000 distinct keys: never more than maxKeys held, heap under 40 MB', async () => {
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
    expect(maxSize).toBeLessThanOrEqual(100_000);
    expect(store.size).toBeGreaterThanOrEqual(50_000);
    expect(grown).toBeLessThan(40 * 1024 * 1024);
    // The keys used least recently go first: the newest are still limited, the oldest start fresh.
    expect((await limiter.consume('203.0.113.999999', { cost: 6 })).allowed).toBe(false);
    expect((await limiter.consume('203.0.113.0', { cost: 6 })).allowed).toBe(true);
  });

  test('heap per key stays near the documented ~200 bytes plus the key text', () => {
    const store = new MemoryStore({ maxKeys: 200_000 });
    const policy = createLimiter({ rate: '10r/s' }).policy;
    const before = heapUsed();
    for (let i = 0; i < 200_000; i++)
      store.consumeSync({ prefix: 'p', key: `k${i}`, policy, cost: 1, nowMs: 1 });
    const perKey = (heapUsed() - before) / 200_000;
    expect(store.size).toBe(200_000);
    expect(perKey).toBeLessThan(260);
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

  test('an idle key is fresh once expired, and its memory goes with its generation', async () => {
    const store = new MemoryStore({ maxKeys: 200 });
    const clock = fakeClock();
    const limiter = createLimiter({ rate: '1r/s', store, clock });
    for (let i = 0; i < 100; i++) await limiter.consume(`idle-${i}`);
    expect((await limiter.consume('idle-0')).allowed).toBe(false);
    clock.advance(1000); // every key is full again: its state is no longer needed
    expect(await limiter.consume('idle-1')).toMatchObject({ allowed: true, remaining: 0 });
    for (let i = 0; i < 200; i++) await limiter.consume(`fresh-${i}`);
    expect(store.size).toBeLessThanOrEqual(200);
    await store.reset({ prefix: 'sluice', key: 'fresh-199', policy: limiter.policy });
    expect((await limiter.consume('fresh-199')).allowed).toBe(true);
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
});
