import { createLimiter, MemoryStore, RedisStore, SluiceConfigError } from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';

const redis = useRedisServer();

describe('lease through createLimiter on Redis', () => {
  test.each(['gcra', 'fixed-window', 'sliding-window'] as const)(
    '%s: a hot key admits exactly its limit with about one script call per lease',
    async (algorithm) => {
      const clock = fakeClock();
      const client = redis.client();
      await client.ping();
      const limiter = createLimiter({
        algorithm,
        rate: '100/1m',
        store: new RedisStore({ client }),
        prefix: `lease-${algorithm}`,
        clock,
        timeoutMs: 5000,
        onStoreError: 'fail-closed',
        lease: { size: 10, maxStaleMs: '10s' },
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
    const limiter = createLimiter({
      rate: '100/1m',
      store: new RedisStore({ client }),
      prefix: 'lease-insured',
      clock: fakeClock(),
      timeoutMs: 5000,
      lease: { size: 10, maxStaleMs: '10s' },
    });
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

  test('lease is refused where it cannot work', () => {
    expect(() => createLimiter({ rate: '100/1m', lease: { size: 10 } })).toThrow(SluiceConfigError);
    expect(() => createLimiter({ rate: '100/1m', store: new MemoryStore(), lease: { size: 10 } })).toThrow(
      /remote store/,
    );
    const store = new RedisStore({ client: redis.client() });
    expect(() => createLimiter({ rate: ['100/1m', '10r/s'], store, lease: { size: 5 } })).toThrow(/one rule/);
  });
});
