import type Redis from 'ioredis';
import { ALGORITHMS, createLimiter, MemoryStore, RedisStore, type Store } from '../../src';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { inBatches } from '../redis/in-batches';

/**
 * Limiters whose `clock` options disagree, taking turns on one key (two app servers a second
 * apart; or one process whose clock stepped back): no algorithm may credit the same time twice.
 * Frozen clocks, so nothing refills: at most the burst (and one refill of the skew) is admitted.
 */
const redis = useRedisServer();
let client: Redis;
beforeAll(() => {
  client = redis.client();
});

const STORES: Array<[string, () => Store]> = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client })],
  ['RedisStore, batch: false', () => new RedisStore({ client, batch: false })],
  ['RedisStore, every call in a batch', () => inBatches(new RedisStore({ client }))],
];

let prefixes = 0;

describe.each(STORES)('%s', (_name, storeOf) => {
  test.each(ALGORITHMS)(
    '%s: two limiters a second apart, taking turns, admit the limit once',
    async (algorithm) => {
      const store = storeOf();
      const prefix = `apart-${++prefixes}`;
      // 100 a minute: one refilled unit every 600 ms, so the second between the clocks is worth 1.7.
      const options = { algorithm, rate: '100/1m', store, prefix, timeoutMs: 10_000 } as const;
      const ahead = createLimiter({ ...options, clock: () => FAKE_EPOCH + 1000 });
      const behind = createLimiter({ ...options, clock: () => FAKE_EPOCH });
      let admitted = 0;
      for (let i = 0; i < 1000; i++) {
        const decision = await (i % 2 === 0 ? behind : ahead).consume('k');
        if (decision.allowed) admitted++;
      }
      expect(admitted).toBeGreaterThanOrEqual(100);
      expect(admitted).toBeLessThanOrEqual(102);
    },
  );
});
