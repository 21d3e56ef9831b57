import type Redis from 'ioredis';
import {
  createLimiter,
  RedisStore,
  type Decision,
  type LimiterOptions,
  type LimiterRulesOptions,
} from '../../src';
import { FAKE_EPOCH, fakeClock } from '../contract/fake-clock';
import { acquireWaits, GUAVA_LIMIT, GUAVA_WAITS_MS } from '../contract/guava-warm-up';
import { useRedisServer } from '../harness/redis-fixtures';
import { storedNumbers } from './packed-state';

/**
 * `queue` and `warmup` on Redis: the same numbers as on the memory store (the differential tests
 * compare the scripts step by step; these are the issue's own sequences, end to end).
 */
const redis = useRedisServer();
let client: Redis;
let store: RedisStore;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
  store = new RedisStore({ client });
});

function limiterOf(options: Omit<LimiterOptions, 'store'> | Omit<LimiterRulesOptions, 'store'>) {
  return createLimiter({ prefix: `qw-${++sequence}`, timeoutMs: 10_000, ...options, store });
}

const delays = (decisions: readonly Decision[]): number[] =>
  decisions.map((d) => (d.allowed ? d.delayMs : -1));

describe.each(['gcra', 'token-bucket'] as const)('RedisStore, %s', (algorithm) => {
  test('queue: 10 requests at once at 5r/s with maxWaitMs 1000 → 6 served 200 ms apart, 4 rejected', async () => {
    const now = FAKE_EPOCH;
    const limiter = limiterOf({ algorithm, rate: '5r/s', queue: { maxWaitMs: 1000 }, clock: () => now });
    const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.consume('sku:1')));
    expect(delays(decisions)).toEqual([0, 200, 400, 600, 800, 1000, -1, -1, -1, -1]);
    expect(decisions[6]).toMatchObject({ reason: 'limited', retryAfterMs: 200 });
  });

  test("queue on the server's clock: the same turns, each as late as the server's time moved on", async () => {
    const limiter = limiterOf({ algorithm, rate: '5r/s', queue: { maxWaitMs: 1000 } });
    const startedAt = performance.now();
    const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.consume('sku:2')));
    // Each decision read the server's time somewhere within the wait: the i-th turn is 200 ms
    // after the first, less the time that passed between their decisions (a loaded machine may
    // send the first alone and the rest in a batch some ms later).
    const elapsedMs = performance.now() - startedAt;
    const served = decisions.filter((d) => d.allowed).map((d) => d.delayMs);
    const limited = decisions.filter((d) => d.reason === 'limited');
    expect(served[0]).toBe(0);
    expect(served.length + limited.length).toBe(10);
    // A turn comes every 200 ms: on a machine so loaded that the server's time moved on by that
    // much between the decisions, the turns it freed were served too, each within maxWaitMs.
    const freed = Math.floor(elapsedMs / 200);
    expect(served.length).toBeGreaterThanOrEqual(6);
    expect(served.length).toBeLessThanOrEqual(6 + freed);
    if (freed > 0) {
      for (const delayMs of served) expect(delayMs).toBeLessThanOrEqual(1000);
      return;
    }
    served.forEach((delayMs, i) => {
      expect(delayMs).toBeLessThanOrEqual(200 * i + 1);
      expect(delayMs).toBeGreaterThanOrEqual(200 * i - elapsedMs - 1);
    });
  });

  test('warmup: the Guava sequence of create(2.0, 4000 ms), exactly', async () => {
    const clock = fakeClock();
    const limiter = limiterOf({ algorithm, ...GUAVA_LIMIT, clock });
    expect(await acquireWaits(limiter, clock, 'sale')).toEqual(GUAVA_WAITS_MS);
    // The state lives under its own key (warm-up state differs from the algorithm's), with a TTL.
    const [key] = await client.keys(`qw-${sequence}:*`);
    expect(key).toBe(`qw-${sequence}:{sale}:warm-up`);
    expect(await client.pttl(key as string)).toBeGreaterThan(0);
  });
});

test('rules with a queue decide in one script call, all or nothing', async () => {
  const now = FAKE_EPOCH;
  const limiter = limiterOf({
    rules: [
      { rate: '5r/s', queue: { maxWaitMs: 1000 } },
      { algorithm: 'fixed-window', rate: '4/1m' },
    ],
    clock: () => now,
  });
  const decisions = await Promise.all(Array.from({ length: 6 }, () => limiter.consume('sku:3')));
  // The per-minute rule stops the queue at 4: the two it rejects take no turn in the queue.
  expect(delays(decisions)).toEqual([0, 200, 400, 600, -1, -1]);
  // The per-minute counter shows the 4 admitted, not the 6 asked.
  expect(await storedNumbers(client, `qw-${sequence}:{sku:3}:fixed-window:1`)).toEqual([now, 4]);
});
