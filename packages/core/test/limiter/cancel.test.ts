import type Redis from 'ioredis';
import {
  createLimiter,
  MemoryStore,
  RedisStore,
  type Decision,
  type LimiterOptions,
  type LimiterRulesOptions,
  type Store,
} from '../../src';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

/**
 * `limiter.cancel`: a delayed admission that will not be served (its client left while held)
 * gives its turn back, so the next request takes it. Memory and Redis give the same numbers.
 */
const redis = useRedisServer();
let client: Redis;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
});

const STORES: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client })],
];

const delays = (decisions: readonly Decision[]): number[] =>
  decisions.map((d) => (d.allowed ? d.delayMs : -1));

describe.each(STORES)('%s', (_name, storeOf) => {
  let now = FAKE_EPOCH;
  const limiterOf = (options: Omit<LimiterOptions, 'store'> | Omit<LimiterRulesOptions, 'store'>) =>
    createLimiter({
      prefix: `cancel-${++sequence}`,
      timeoutMs: 10_000,
      clock: () => now,
      ...options,
      store: storeOf(),
    });
  const burst = async (limiter: ReturnType<typeof limiterOf>, n: number, key = 'sku:1') => {
    const out: Decision[] = [];
    for (let i = 0; i < n; i++) out.push(await limiter.consume(key));
    return out;
  };
  beforeEach(() => {
    now = FAKE_EPOCH;
  });

  test.each(['gcra', 'token-bucket'] as const)(
    '%s queue: two queued clients leave, the next two requests take their turns',
    async (algorithm) => {
      const limiter = limiterOf({ algorithm, rate: '5r/s', queue: { maxWaitMs: 1000 } });
      const first = await burst(limiter, 6);
      expect(delays(first)).toEqual([0, 200, 400, 600, 800, 1000]);
      expect(await limiter.cancel(first[2] as Decision)).toBe(true);
      expect(await limiter.cancel(first[5] as Decision)).toBe(true);
      // The queue is two turns shorter: newcomers wait as the last ones did, then it is full again.
      expect(delays(await burst(limiter, 3))).toEqual([800, 1000, -1]);
    },
  );

  test('leaky bucket without nodelay: a held request that is cancelled leaves the bucket', async () => {
    const limiter = limiterOf({ algorithm: 'leaky-bucket', rate: '1r/s', burst: 2 });
    const first = await burst(limiter, 3);
    expect(delays(first)).toEqual([0, 1000, 2000]);
    expect(await limiter.cancel(first[2] as Decision)).toBe(true);
    expect(delays(await burst(limiter, 2))).toEqual([2000, -1]);
  });

  test('a clock that broke after the decision: cancel resolves false and the turn stays taken, never throws', async () => {
    const limiter = limiterOf({ algorithm: 'leaky-bucket', rate: '1r/s', burst: 2 });
    const first = await burst(limiter, 3);
    expect(delays(first)).toEqual([0, 1000, 2000]);
    now = Number.NaN;
    // Called from a response's close listener: a throw there would end the process.
    let cancelled: Promise<boolean> | undefined;
    expect(() => (cancelled = limiter.cancel(first[2] as Decision))).not.toThrow();
    await expect(cancelled).resolves.toBe(false);
    now = FAKE_EPOCH;
    expect(delays(await burst(limiter, 1))).toEqual([-1]);
  });

  test('warm-up: a cancelled turn moves the next free time back', async () => {
    const limiter = limiterOf({ rate: '2r/s', warmup: '4s', queue: { maxWaitMs: '1m' } });
    const first = await burst(limiter, 2);
    expect(delays(first)).toEqual([0, 1375]);
    expect(await limiter.cancel(first[1] as Decision)).toBe(true);
    // Its turn took 1125 ms of the curve; 500 (the stable interval) come back: never more
    // than the cancelled request took.
    expect((await limiter.consume('sku:1')).delayMs).toBe(1375 + 1125 - 500);
  });

  test('nothing to give back: a rejection, an admission without delay, a window algorithm', async () => {
    const limiter = limiterOf({ rate: '5r/s', queue: { maxWaitMs: 200 } });
    const [now0, queued, rejected] = await burst(limiter, 3);
    expect(await limiter.cancel(now0 as Decision)).toBe(false);
    expect(await limiter.cancel(rejected as Decision)).toBe(false);
    expect(queued?.delayMs).toBe(200);
    const windows = limiterOf({ algorithm: 'fixed-window', rate: '2/1m' });
    const [w] = await burst(windows, 1);
    expect(await windows.cancel({ ...(w as Decision), delayMs: 5 })).toBe(false);
    expect(delays(await burst(windows, 2))).toEqual([0, -1]);
  });

  test('several rules: the turn goes back to the rules that delay; a window keeps its count', async () => {
    const limiter = limiterOf({
      rules: [
        { rate: '5r/s', queue: { maxWaitMs: 1000 } },
        { algorithm: 'fixed-window', rate: '7/1m' },
      ],
    });
    const first = await burst(limiter, 6);
    expect(delays(first)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(await limiter.cancel(first[5] as Decision)).toBe(true);
    // The queue takes one more (without the turn back it would be full); the per-minute rule
    // counted all six, so that one is its last.
    expect(delays(await burst(limiter, 2))).toEqual([1000, -1]);
    now += 2000; // the queue has drained, the minute has not
    expect(delays(await burst(limiter, 1))).toEqual([-1]);
  });

  test('an overridden key gives back to its own rate', async () => {
    const limiter = limiterOf({
      rate: '1r/s',
      queue: { maxWaitMs: 1000 },
      overrides: { 'sku:hot': '5r/s' },
    });
    const first = await burst(limiter, 6, 'sku:hot');
    expect(delays(first)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(await limiter.cancel(first[4] as Decision)).toBe(true);
    expect(delays(await burst(limiter, 2, 'sku:hot'))).toEqual([1000, -1]);
  });
});

describe('a store that cannot give back', () => {
  /** A remote store (no consumeSync) deciding in memory, whose giveBack hangs or fails. */
  const remoteOf = (giveBack: () => Promise<void>): Store => {
    const inner = new MemoryStore();
    return {
      consume: (request) => inner.consume(request),
      reset: (request) => inner.reset(request),
      giveBack,
    };
  };

  test.each([
    ['never answers', () => new Promise<void>(() => undefined)],
    ['fails', () => Promise.reject(new Error('connection lost'))],
  ])('%s: cancel resolves false (within timeoutMs), and the turn stays taken', async (_name, giveBack) => {
    const limiter = createLimiter({
      rate: '5r/s',
      queue: { maxWaitMs: 1000 },
      clock: () => FAKE_EPOCH,
      timeoutMs: 20,
      store: remoteOf(giveBack),
    });
    await limiter.consume('k');
    const queued = await limiter.consume('k');
    expect(queued.delayMs).toBe(200);
    await expect(limiter.cancel(queued)).resolves.toBe(false);
  });
});
