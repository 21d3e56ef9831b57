import { createConcurrencyLimiter, RedisStore } from '../../src';
import { useRedisServer } from '../harness/redis-fixtures';
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
});
