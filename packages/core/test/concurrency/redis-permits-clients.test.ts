import { createConcurrencyLimiter, RedisStore } from '../../src';
import { useRedisServer } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';
import { OTHER_CLIENT_KINDS, openClient, type OpenClient } from '../harness/store-clients';

/**
 * Concurrency permits through every client the store takes besides ioredis (whose run is
 * redis-permits.test.ts): the permit scripts go through the same narrow client interface.
 */
const redis = useRedisServer();

describe.each(OTHER_CLIENT_KINDS)('concurrency permits on %s', (kind) => {
  let open: OpenClient;
  beforeAll(async () => {
    open = await openClient(kind, redis.server());
  });
  afterAll(() => open.close());

  test('two limiters on one store share max; a release frees a permit, exactly once', async () => {
    const store = new RedisStore({ client: open.client });
    const prefix = `conc-clients-${kind.replace(/\W/g, '')}`;
    const [a, b] = [1, 2].map(() => createConcurrencyLimiter({ max: 2, store, prefix, timeoutMs: 5000 }));
    const first = await a!.acquire('k');
    const second = await b!.acquire('k');
    const third = await a!.acquire('k');
    expect([first.allowed, second.allowed, third.allowed]).toEqual([true, true, false]);
    expect(third.degraded).toBeUndefined();
    await first.permit?.release();
    await first.permit?.release(); // idempotent: the second release frees nothing more
    const fourth = await b!.acquire('k');
    const fifth = await b!.acquire('k');
    expect([fourth.allowed, fifth.allowed]).toEqual([true, false]);
    await second.permit?.release();
    await fourth.permit?.release();
    expect(await redis.client().zcard(`${prefix}:{k}:permits`)).toBe(0);
  });

  test('acquires and releases at once, batched: exactly max pass, and every permit comes back', async () => {
    const store = new RedisStore({ client: open.client });
    const prefix = `conc-clients-batch-${kind.replace(/\W/g, '')}`;
    const [a, b] = [3, 5].map((max) => createConcurrencyLimiter({ max, store, prefix, timeoutMs: 5000 }));
    // Two limiters on one key with their own max, their acquires interleaved: runs split where
    // max changes, and each acquire counts the leases the ones before it took in the same call.
    await (await a!.acquire('warm')).permit?.release(); // scripts loaded on first use
    const before = await scriptCalls(redis.client());
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a! : b!).acquire('hot')),
    );
    expect((await scriptCalls(redis.client())) - before).toBeLessThan(10); // batches, not 40 calls
    expect(decisions.every((d) => d.degraded === undefined)).toBe(true);
    const held = decisions.map((d) => d.inFlight);
    const admitted = decisions.filter((d) => d.allowed);
    // b (max 5) is admitted up to 5 in all; a (max 3) only while fewer than 3 are held.
    expect(admitted).toHaveLength(5);
    expect(Math.max(...held)).toBe(5);
    expect(await a!.inFlight('hot')).toBe(5);
    await Promise.all(admitted.map((d) => d.permit?.release()));
    expect(await redis.client().zcard(`${prefix}:{hot}:permits`)).toBe(0);
  });
});
