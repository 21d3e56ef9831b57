import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createLimiter, MemoryStore } from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { FlakyStore } from './flaky-store';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = (): number => {
  gc();
  return process.memoryUsage().heapUsed;
};

/** The documented ceiling for a MemoryStore at its default maxKeys (100 000): 16 MB of heap. */
const CEILING = 16 * 1024 * 1024;

describe('key floods', () => {
  test('10 000 000 distinct keys: MemoryStore holds at most maxKeys and its heap stays under 16 MB', () => {
    const store = new MemoryStore();
    const policy = createLimiter({ rate: '10r/s', burst: 5 }).policy;
    const before = heapUsed();
    let peakKeys = 0;
    let peakHeap = 0;
    for (let i = 0; i < 10_000_000; i++) {
      // rotating IPv4 addresses, as an attacker would
      store.consumeSync({
        prefix: 'p',
        key: `${(i >>> 24) & 255}.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`,
        policy,
        cost: 1,
        nowMs: 1,
      });
      if (i % 1_000_000 === 999_999) {
        peakKeys = Math.max(peakKeys, store.size);
        peakHeap = Math.max(peakHeap, heapUsed() - before);
      }
    }
    expect(peakKeys).toBeLessThanOrEqual(100_000);
    expect(peakHeap).toBeLessThan(CEILING);
  }, 60_000);

  test('the insurance store under a flood while the shared store is down: bounded too', async () => {
    const insurance = new MemoryStore({ maxKeys: 10_000 });
    const store = new FlakyStore();
    store.mode = 'throw';
    const limiter = createLimiter({ rate: '1r/s', store, clock: fakeClock(), onStoreError: { insurance } });
    for (let i = 0; i < 200_000; i++) {
      const d = await limiter.consume(`2001:db8:${i.toString(16)}::1`);
      if (d.degraded !== 'insurance') throw new Error('expected the insurance store to decide');
    }
    expect(insurance.size).toBeLessThanOrEqual(10_000);
    // the store was not hammered: the circuit stopped asking it
    expect(store.calls).toBeLessThan(10);
  }, 60_000);
});
