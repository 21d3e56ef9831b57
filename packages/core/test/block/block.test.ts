import type Redis from 'ioredis';
import {
  ALGORITHMS,
  consumeAll,
  createLimiter,
  MemoryStore,
  RedisStore,
  type AlgorithmName,
  type Limiter,
  type LimiterOptions,
  type Store,
} from '../../src';
import { errorOf } from '../contract/config-error-of';
import { fakeClock, type FakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { openClient, type OpenClient } from '../harness/store-clients';

const redis = useRedisServer();
const MINUTE = 60_000;

const opened: OpenClient[] = [];
afterAll(async () => {
  for (const open of opened.splice(0)) await open.close();
});

const stores: Array<[string, () => Store | Promise<Store>]> = [
  ['memory', () => new MemoryStore()],
  ['Redis', () => new RedisStore({ client: redis.client() })],
  ['Redis, unbatched', () => new RedisStore({ client: redis.client(), batch: false })],
  [
    'Redis, node-redis 5',
    async () => {
      const open = await openClient('node-redis 5', redis.server());
      opened.push(open);
      return new RedisStore({ client: open.client });
    },
  ],
];

/** A rate of two requests per hour in every algorithm: the third within the hour is refused. */
function twoPerHour(algorithm: AlgorithmName): Pick<LimiterOptions, 'rate' | 'algorithm' | 'burst'> {
  return algorithm === 'gcra' || algorithm === 'token-bucket' || algorithm === 'leaky-bucket'
    ? { algorithm, rate: '2/1h', burst: 1, ...(algorithm === 'leaky-bucket' ? { nodelay: true } : {}) }
    : { algorithm, rate: '2/1h' };
}

let serial = 0;

describe.each(stores)('block on %s', (name, storeOf) => {
  let store: Store;
  beforeAll(async () => {
    store = await storeOf();
  });
  const make = (clock: FakeClock, options: Partial<LimiterOptions> = {}): Limiter =>
    createLimiter({
      rate: '2/1h',
      store,
      prefix: `block-${name}-${serial++}`,
      clock,
      timeoutMs: 10_000,
      blockCache: false,
      ...options,
    } as LimiterOptions);

  test.each(ALGORITHMS)(
    'a refusal blocks the key for duration, untouched by its limit (%s)',
    async (algorithm) => {
      const clock = fakeClock();
      const limiter = make(clock, { ...twoPerHour(algorithm), block: { duration: '15m' } });
      expect((await limiter.consume('k')).allowed).toBe(true);
      expect((await limiter.consume('k')).allowed).toBe(true);
      const refused = await limiter.consume('k');
      expect(refused).toMatchObject({ allowed: false, reason: 'limited' });
      expect(refused.retryAfterMs).toBeGreaterThanOrEqual(15 * MINUTE);
      clock.advance(MINUTE);
      const blocked = await limiter.consume('k');
      expect(blocked).toMatchObject({
        allowed: false,
        reason: 'blocked',
        remaining: 0,
        retryAfterMs: 14 * MINUTE,
      });
      // A peek reports the block; another key is not blocked.
      expect(await limiter.peek('k')).toMatchObject({
        allowed: false,
        reason: 'blocked',
        retryAfterMs: 14 * MINUTE,
      });
      expect((await limiter.consume('other')).allowed).toBe(true);
      // The block ends after duration: the key is back on its limit, which the block did not touch.
      clock.advance(14 * MINUTE);
      const after = await limiter.consume('k');
      expect(after.reason).not.toBe('blocked');
    },
  );

  test('the block doubles on each offence within maxDuration, stops at maxDuration, and starts from duration after maxDuration of good behaviour', async () => {
    const clock = fakeClock();
    const limiter = make(clock, {
      rate: '1/1m',
      algorithm: 'fixed-window',
      block: { duration: '1m', backoff: 2, maxDuration: '5m' },
    });
    const offend = async (): Promise<number> => {
      expect((await limiter.consume('k')).allowed).toBe(true);
      const refused = await limiter.consume('k');
      expect(refused).toMatchObject({ allowed: false, reason: 'limited' });
      return (await limiter.peek('k')).retryAfterMs;
    };
    const lengths: number[] = [];
    for (let i = 0; i < 5; i++) {
      lengths.push(await offend());
      clock.advance(lengths[lengths.length - 1] as number);
      // Past the block, in a new window.
      clock.advance(MINUTE - (clock() % MINUTE));
    }
    expect(lengths).toEqual([1, 2, 4, 5, 5].map((m) => m * MINUTE));
    // maxDuration (5 min) of good behaviour after the last block: the next starts at duration.
    clock.advance(5 * MINUTE);
    expect(await offend()).toBe(MINUTE);
  });

  test('reset lifts the block, and the backoff starts again', async () => {
    const clock = fakeClock();
    const limiter = make(clock, { rate: '1/1h', block: { duration: '10m', backoff: 3 } });
    await limiter.consume('k');
    await limiter.consume('k');
    expect((await limiter.consume('k')).reason).toBe('blocked');
    await limiter.reset('k');
    expect((await limiter.consume('k')).allowed).toBe(true);
    await limiter.consume('k');
    expect((await limiter.peek('k')).retryAfterMs).toBe(10 * MINUTE);
  });

  test('several rules: a refusal by any rule blocks the key; during the block nothing is taken', async () => {
    const clock = fakeClock();
    const limiter = make(clock, {
      rate: ['2/1m', '100/1h'],
      algorithm: 'sliding-window',
      block: { duration: '5m' },
    });
    await limiter.consume('k');
    await limiter.consume('k');
    expect((await limiter.consume('k')).reason).toBe('limited');
    for (let i = 0; i < 3; i++) expect((await limiter.consume('k')).reason).toBe('blocked');
    clock.advance(5 * MINUTE);
    const after = await limiter.consume('k');
    expect(after.allowed).toBe(true);
    // The hourly rule took two before the block and one now: nothing during the block.
    expect(after.limits?.[1]?.remaining).toBe(97);
  });

  test('several limits: a block on one refuses the whole request, nothing taken from the others', async () => {
    const clock = fakeClock();
    const perUser = make(clock, { rate: '1/1h', block: { duration: '10m' } });
    const perRoute = make(clock, { rate: '100/1h' });
    const both = (key: string) =>
      consumeAll([
        { limiter: perUser, key },
        { limiter: perRoute, key: 'route' },
      ]);
    expect((await both('u'))[0]?.allowed).toBe(true);
    expect((await both('u'))[0]?.reason).toBe('limited');
    const blocked = await both('u');
    expect(blocked[0]).toMatchObject({ allowed: false, reason: 'blocked' });
    expect(blocked[1]).toBeUndefined();
    // One taken by the admitted request; none by the refused one, none by the blocked one.
    expect((await perRoute.peek('route')).remaining).toBe(99);
    // A dry-run limit with a block reports it without refusing.
    const dry = await consumeAll([
      { limiter: perUser, key: 'u', dryRun: true },
      { limiter: perRoute, key: 'route' },
    ]);
    expect(dry[0]).toMatchObject({ allowed: false, reason: 'blocked' });
    expect(dry[1]?.allowed).toBe(true);
  });

  test('many keys at once (one batch call on Redis): each decided and blocked as alone', async () => {
    const clock = fakeClock();
    const limiter = make(clock, { rate: ['1/1h', '10/1d'], block: { duration: '10m', backoff: 2 } });
    const single = make(clock, { rate: '1/1h', algorithm: 'sliding-log', block: { duration: '10m' } });
    const keys = Array.from({ length: 40 }, (_, i) => `user:${i}`);
    const all = (l: Limiter) => Promise.all(keys.map((key) => l.consume(key)));
    for (const l of [limiter, single]) {
      expect((await all(l)).map((d) => d.allowed)).toEqual(keys.map(() => true));
      expect((await all(l)).map((d) => d.reason)).toEqual(keys.map(() => 'limited'));
      clock.advance(MINUTE);
      expect((await all(l)).map((d) => [d.reason, d.retryAfterMs])).toEqual(
        keys.map(() => ['blocked', 9 * MINUTE]),
      );
    }
  });

  test('a cost that can never pass blocks nothing', async () => {
    const clock = fakeClock();
    const limiter = make(clock, { rate: '2/1h', block: { duration: '10m' } });
    expect((await limiter.consume('k', { cost: 5 })).reason).toBe('cost-exceeds-capacity');
    expect((await limiter.consume('k')).allowed).toBe(true);
  });
});

describe('block on Redis', () => {
  test('a key blocked by one instance is refused by another sharing the server, in one request', async () => {
    const clock = fakeClock();
    const options = {
      rate: '1/1h',
      prefix: 'shared-block',
      clock,
      block: { duration: '15m' },
      timeoutMs: 10_000,
    };
    const one = createLimiter({ ...options, store: new RedisStore({ client: redis.client() }) });
    const two = createLimiter({ ...options, store: new RedisStore({ client: redis.client() }) });
    await one.consume('k');
    expect((await one.consume('k')).reason).toBe('limited');
    expect(await two.consume('k')).toMatchObject({
      allowed: false,
      reason: 'blocked',
      retryAfterMs: 15 * MINUTE,
    });
  });

  test('block records expire at most maxDuration after the block ends', async () => {
    const client = redis.client();
    const store = new RedisStore({ client });
    const limiter = createLimiter({
      rate: '1/1h',
      prefix: 'block-ttl',
      store,
      block: { duration: '10m', backoff: 2, maxDuration: '1h' },
      timeoutMs: 10_000,
    });
    await limiter.consume('k');
    await limiter.consume('k');
    const key = store.blockKeyOf({ prefix: 'block-ttl', key: 'k' });
    expect(key).toBe('block-ttl:{k}:block@1');
    const ttl = await client.pttl(key);
    expect(ttl).toBeGreaterThan(70 * MINUTE - 5_000);
    expect(ttl).toBeLessThanOrEqual(70 * MINUTE);
    await limiter.reset('k');
    expect(await client.exists(key)).toBe(0);
  });

  test('the block cache refuses a blocked key without a store call', async () => {
    const clock = fakeClock();
    const client = redis.client();
    const store = new RedisStore({ client });
    const limiter = createLimiter({
      rate: '1/1h',
      prefix: 'block-cache',
      store,
      clock,
      block: { duration: '15m' },
      timeoutMs: 10_000,
    });
    await limiter.consume('k');
    await limiter.consume('k');
    const consume = jest.spyOn(store, 'consume');
    const [calls] = await callsOf(client, async () => {
      const blocked = await limiter.consume('k');
      expect(blocked).toMatchObject({ allowed: false, reason: 'blocked', retryAfterMs: 15 * MINUTE });
      clock.advance(MINUTE);
      expect(await limiter.consume('k')).toMatchObject({ reason: 'blocked', retryAfterMs: 14 * MINUTE });
    });
    expect(calls).toBe(0);
    expect(consume).not.toHaveBeenCalled();
    // A reset forgets the cache's block too.
    await limiter.reset('k');
    expect((await limiter.consume('k')).allowed).toBe(true);
  });
});

/** How many commands the server processed while `run` ran (INFO's total_commands_processed). */
async function callsOf(client: Redis, run: () => Promise<void>): Promise<[number]> {
  const count = async (): Promise<number> =>
    Number(/total_commands_processed:(\d+)/.exec(await client.info('stats'))?.[1]);
  const before = await count();
  await run();
  // The INFO call itself counts one.
  return [(await count()) - before - 1];
}

describe('block option', () => {
  test.each([
    [{ duration: 0 }, 'block.duration'],
    [{}, 'block.duration'],
    [{ duration: '1x' }, 'block.duration'],
    [{ duration: '1m', backoff: 0.5 }, 'block.backoff'],
    [{ duration: '1m', backoff: Number.NaN }, 'block.backoff'],
    [{ duration: '1m', maxDuration: '30s' }, 'block.maxDuration'],
    [{ duration: '1m', time: 1 }, 'block.time'],
    ['15m', 'block'],
  ])('%j is refused naming %s', (block, option) => {
    const error = errorOf(() => createLimiter({ rate: '1r/s', block } as unknown as LimiterOptions));
    expect(error.option).toBe(option);
    expect(error.message).toContain(option);
  });

  test('not with lease', () => {
    const store = new RedisStore({ client: redis.client() });
    const error = errorOf(() =>
      createLimiter({
        rate: '10r/s',
        burst: 20,
        store,
        block: { duration: '1m' },
        lease: { size: 5, maxStaleMs: 100 },
      }),
    );
    expect(error.option).toBe('lease');
  });
});

test('MemoryStore: block records count toward maxKeys, as states do', async () => {
  const store = new MemoryStore({ maxKeys: 8 });
  const limiter = createLimiter({ rate: '1/1h', store, clock: fakeClock(), block: { duration: '1h' } });
  for (let i = 0; i < 100; i++) {
    await limiter.consume(`k${i}`);
    await limiter.consume(`k${i}`);
  }
  expect(store.size).toBeLessThanOrEqual(8);
  // The last keys are still blocked.
  expect((await limiter.consume('k99')).reason).toBe('blocked');
});
