import type Redis from 'ioredis';
import { createLimiter, MemoryStore, RedisStore, SluiceConfigError, type LimiterOptions } from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';

const redis = useRedisServer();

/** A limiter on `client` taking leases of `size`, on a clock that stands still. */
function leasedLimiter(
  client: Redis,
  size: number,
  options: Pick<LimiterOptions, 'rate' | 'prefix'> & Partial<LimiterOptions>,
  maxStaleMs = '10s',
) {
  return createLimiter({
    store: new RedisStore({ client }),
    clock: fakeClock(),
    timeoutMs: 5000,
    lease: { size, maxStaleMs },
    ...options,
  });
}

describe('lease through createLimiter on Redis', () => {
  test.each(['gcra', 'fixed-window', 'sliding-window'] as const)(
    '%s: a hot key admits exactly its limit with about one script call per lease',
    async (algorithm) => {
      const client = redis.client();
      await client.ping();
      const limiter = leasedLimiter(client, 10, {
        algorithm,
        rate: '100/1m',
        prefix: `lease-${algorithm}`,
        onStoreError: 'fail-closed',
      });
      const before = await scriptCalls(redis.client());
      let admitted = 0;
      for (let i = 0; i < 300; i++) if ((await limiter.consume('sku:hot')).allowed) admitted++;
      const calls = (await scriptCalls(redis.client())) - before;
      expect(admitted).toBe(100);
      // 10 leases for 100 admissions (1 / size), plus the refused lease and single unit at the end
      expect(calls / admitted).toBeLessThanOrEqual((1 / 10) * 1.2);
    },
  );

  test('Redis away, insurance decides: each request is charged its own cost, not a lease', async () => {
    const client = redis.client();
    await client.ping();
    const limiter = leasedLimiter(client, 10, { rate: '100/1m', prefix: 'lease-insured' });
    client.disconnect(); // every call fails at once: onStoreError (insurance, the default) decides
    let admitted = 0;
    for (let i = 0; i < 300; i++) {
      const decision = await limiter.consume('sku:hot');
      expect(decision.degraded).toBe('insurance');
      if (decision.allowed) admitted++;
    }
    // The insurance store's own limit, as without lease: 10 a request would have left 10.
    expect(admitted).toBe(100);
  });

  test('reset(key) starts the key afresh here too: no leased unit outlives it, no refusal stays', async () => {
    const client = redis.client();
    await client.ping();
    const limiter = leasedLimiter(client, 5, { rate: '10/1m', prefix: 'lease-reset' }, '1m');
    const admitted = async (n: number): Promise<number> => {
      let count = 0;
      for (let i = 0; i < n; i++) if ((await limiter.consume('k')).allowed) count++;
      return count;
    };
    expect(await admitted(15)).toBe(10); // spent: the refusal is remembered here
    await limiter.reset('k');
    expect(await admitted(1)).toBe(1); // not refused until the window's end
    expect(await admitted(20)).toBe(9); // the fresh limit, and no more: 10 in all
    expect(await admitted(3)).toBe(0);
    await limiter.reset('k');
    expect(await admitted(1)).toBe(1); // a lease of 5: 4 units left here
    await limiter.reset('k');
    // Units leased before a reset do not add to the fresh limit.
    expect(await admitted(20)).toBe(10);
  });

  test('lease is refused where it cannot work', () => {
    expect(() => createLimiter({ rate: '100/1m', lease: { size: 10 } })).toThrow(SluiceConfigError);
    expect(() => createLimiter({ rate: '100/1m', store: new MemoryStore(), lease: { size: 10 } })).toThrow(
      /remote store/,
    );
    const store = new RedisStore({ client: redis.client() });
    expect(() => createLimiter({ rate: ['100/1m', '10r/s'], store, lease: { size: 5 } })).toThrow(/one rule/);
  });
});
