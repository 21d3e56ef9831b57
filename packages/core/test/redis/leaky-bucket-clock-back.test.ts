import { createLimiter, MemoryStore, RedisStore, type Store } from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

/**
 * nginx `limit_req` on a clock that went back (ngx_http_limit_req_lookup):
 *
 *     ms = (ngx_msec_int_t) (now - lr->last);
 *     if (ms < -60000) { ms = 1; } else if (ms < 0) { ms = 0; }
 *
 * A vector of its own for the rule, run on both sides, so it is pinned by nginx's numbers and
 * not only by the TypeScript step and its Lua twin agreeing with each other. At 6r/m a full
 * bucket needs 10 000 ms to let one request out, so a refusal's `retryAfterMs` is 10 000 minus
 * the milliseconds the rule counted: 9 999 for "counts as 1 ms", 10 000 for "counts as 0".
 * (The state's TTL is 10 s of Redis's own time, far longer than the test runs.)
 */
const redis = useRedisServer();

const stores: Array<[string, () => Store]> = [
  ['memory', () => new MemoryStore()],
  ['redis', () => new RedisStore({ client: redis.client() })],
];

describe.each(stores)('leaky bucket, clock stepping back (%s)', (_name, storeOf) => {
  const limiterOf = (clock: () => number) =>
    // No block cache: every refusal here must come from the store's own step.
    createLimiter({
      algorithm: 'leaky-bucket',
      rate: '6r/m',
      store: storeOf(),
      clock,
      timeoutMs: 1000,
      blockCache: false,
    });

  test.each([
    // how far back the clock steps (ms), and the refusal's retryAfterMs
    [-1, 10_000],
    [-30_000, 10_000],
    [-60_000, 10_000], // exactly one minute back: still "a smaller step back", 0 ms
    [-60_001, 9_999], // more than a minute back: counts as 1 ms
    [-3_600_000, 9_999],
  ])('a step of %d ms: the refusal says retry in %d ms', async (step, retryAfterMs) => {
    const clock = fakeClock();
    const limiter = limiterOf(clock);
    const key = `back${step}`;
    expect((await limiter.consume(key)).allowed).toBe(true);
    clock.advance(step);
    expect(await limiter.consume(key)).toMatchObject({ allowed: false, retryAfterMs });
  });

  test('after a small step back nothing leaks until the clock passes the last leak again', async () => {
    const clock = fakeClock();
    const limiter = limiterOf(clock);
    expect((await limiter.consume('k')).allowed).toBe(true);
    clock.advance(-5_000);
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 10_000 });
    clock.advance(4_999); // 1 ms before the first request: still 0 ms
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 10_000 });
    clock.advance(2); // 1 ms after it
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 9_999 });
    clock.advance(9_999);
    expect((await limiter.consume('k')).allowed).toBe(true);
  });
});
