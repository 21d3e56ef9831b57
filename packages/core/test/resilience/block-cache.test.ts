import { ALGORITHMS, createLimiter, MemoryStore, RedisStore, SluiceConfigError } from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';

const redis = useRedisServer();

describe('block cache', () => {
  test.each(ALGORITHMS)(
    '%s: a 50× flood on one key costs < 0.05 Redis calls per request, with exactly the admissions of the store alone',
    async (algorithm) => {
      const clock = fakeClock();
      const options = {
        algorithm,
        rate: '10/1s',
        clock,
        ...(algorithm === 'leaky-bucket' ? { nodelay: true } : {}),
      } as const;
      const client = redis.client();
      await client.ping();
      const cached = createLimiter({
        ...options,
        store: new RedisStore({ client }),
        prefix: `flood-${algorithm}`,
        timeoutMs: 5000,
      });
      const reference = createLimiter({ ...options, store: new MemoryStore() });
      const before = await scriptCalls(redis.client());
      let requests = 0;
      let admitted = 0;
      // 500 requests a second (50× the limit) for 3 seconds, one every 2 ms.
      for (let i = 0; i < 1500; i++) {
        const [got, expected] = await Promise.all([cached.consume('sku:1'), reference.consume('sku:1')]);
        expect([i, got.allowed]).toEqual([i, expected.allowed]);
        expect(got.degraded).toBeUndefined();
        if (!got.allowed) expect(got.retryAfterMs).toBeGreaterThan(0);
        requests++;
        if (got.allowed) admitted++;
        clock.advance(2);
      }
      const perRequest = ((await scriptCalls(redis.client())) - before) / requests;
      expect(admitted).toBeGreaterThanOrEqual(25); // about 10 a second; the window algorithms differ a little
      expect(perRequest).toBeLessThan(0.05);
    },
    30_000,
  );

  test('a cheaper request than the one rejected still asks the store; reset clears the block', async () => {
    const clock = fakeClock();
    const client = redis.client();
    const limiter = createLimiter({
      rate: '5/1m',
      store: new RedisStore({ client }),
      clock,
      prefix: 'cheaper',
    });
    expect((await limiter.consume('k', { cost: 3 })).allowed).toBe(true);
    expect((await limiter.consume('k', { cost: 3 })).allowed).toBe(false); // blocked for cost >= 3
    expect((await limiter.consume('k', { cost: 2 })).allowed).toBe(true); // the store decides
    expect((await limiter.consume('k')).allowed).toBe(false);
    await limiter.reset('k');
    expect((await limiter.consume('k', { cost: 5 })).allowed).toBe(true);
  });

  test('blockCache: false asks the store every time', async () => {
    const clock = fakeClock();
    const limiter = createLimiter({
      rate: '1/1m',
      store: new RedisStore({ client: redis.client() }),
      clock,
      prefix: 'nocache',
      blockCache: false,
    });
    await limiter.consume('k');
    const before = await scriptCalls(redis.client());
    for (let i = 0; i < 10; i++) await limiter.consume('k');
    expect((await scriptCalls(redis.client())) - before).toBe(10);
  });

  test('blockCache: { maxKeys: 2 } reaches the cache: a third blocked key pushes out the first, which asks the store again', async () => {
    const clock = fakeClock();
    const store = new RedisStore({ client: redis.client() });
    const bounded = createLimiter({
      rate: '1/1m',
      store,
      clock,
      prefix: 'bounded',
      blockCache: { maxKeys: 2 },
    });
    const roomy = createLimiter({ rate: '1/1m', store, clock, prefix: 'roomy' });
    for (const limiter of [bounded, roomy]) {
      for (const key of ['a', 'b', 'c']) {
        await limiter.consume(key);
        expect((await limiter.consume(key)).allowed).toBe(false); // blocked until a minute on
      }
    }
    const storeCallsFor = async (limiter: typeof bounded): Promise<number> => {
      const before = await scriptCalls(redis.client());
      expect((await limiter.consume('a')).allowed).toBe(false);
      return (await scriptCalls(redis.client())) - before;
    };
    expect(await storeCallsFor(roomy)).toBe(0);
    expect(await storeCallsFor(bounded)).toBe(1);
  });

  test.each([
    [{ blockCache: 'yes' }, 'blockCache'],
    [{ blockCache: { maxKeys: 0 } }, 'blockCache.maxKeys'],
  ])('%j → %s', (options, option) => {
    expect(() => createLimiter({ rate: '1r/s', ...(options as object) })).toThrow(SluiceConfigError);
    expect(() => createLimiter({ rate: '1r/s', ...(options as object) })).toThrow(
      new RegExp(`^${option.replace('.', '\\.')} `),
    );
  });
});
