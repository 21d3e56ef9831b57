import {
  ALGORITHMS,
  createLimiter,
  RedisStore,
  type Decision,
  type LimiterMetrics,
  type MetricsSink,
  type Store,
} from '../../src';
import {
  createHttpLimiter,
  type HttpOutcome,
  type HttpRequest,
  type RateLimitOptions,
} from '../../src/adapter';
import { fakeClock, type FakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

/** The request a cost function reads: how many items it buys. */
type Req = { items: number };
type Options = RateLimitOptions<Req, () => void>;

const redis = useRedisServer();
let redisStore: RedisStore | undefined;
const STORES: Array<[string, () => Store | undefined]> = [
  ['memory', () => undefined],
  ['redis', () => (redisStore ??= new RedisStore({ client: redis.client() }))],
];

/** Every algorithm with a limit of 3 at once and no delay: the same story for each. */
const POLICIES = ALGORITHMS.map((algorithm) => ({
  algorithm,
  ...(algorithm === 'leaky-bucket' ? { rate: '3r/m', burst: 2, nodelay: true } : { rate: '3/1m' }),
}));

const HTTP: HttpRequest = { remoteAddress: '203.0.113.9', url: '/cart', headers: {} };
let prefixes = 0;

/** A metrics sink that keeps every decision it is told of. */
function recording(): { sink: MetricsSink; decided: Decision[]; blockCacheHits: () => number } {
  const decided: Decision[] = [];
  let hits = 0;
  const ignore = () => undefined;
  const metrics: LimiterMetrics = {
    decided: (decision) => decided.push(decision),
    storeCall: ignore,
    storeError: ignore,
    storeUp: ignore,
    blockCacheHit: () => hits++,
    leaseCall: ignore,
  };
  return { sink: { limiter: () => metrics }, decided, blockCacheHits: () => hits };
}

/** What a client sees of an outcome: its status (200 when let through), `RateLimit` and `Retry-After`. */
function seen(outcome: HttpOutcome<() => void>): [number, string | undefined, string | undefined] {
  const header = (name: string) => outcome.headers.find(([n]) => n === name)?.[1];
  const status = outcome.kind === 'reply' ? outcome.status : 200;
  return [status, header('RateLimit'), header('Retry-After')];
}

describe.each(STORES)('a request of cost 0 needs a unit left and takes none (%s store)', (_name, store) => {
  let clock: FakeClock;
  beforeEach(() => {
    clock = fakeClock();
  });
  const options = (policy: object, extra: Partial<Options> = {}): Options =>
    ({
      ...policy,
      clock,
      key: 'cart',
      prefix: `zero-cost-${++prefixes}`,
      timeoutMs: 2000,
      cost: (req: Req) => req.items,
      ...(store() === undefined ? {} : { store: store() }),
      ...extra,
    }) as Options;

  test.each(POLICIES)('one limit: $algorithm', async (policy) => {
    const { sink, decided, blockCacheHits } = recording();
    const limits = createHttpLimiter<Req, () => void>(options(policy, { metrics: sink }));
    const [limiter] = limits.limiters;
    const decide = async (items: number) => seen(await limits.decide({ items }, HTTP));

    const [status, rateLimit] = await decide(0);
    expect([status, rateLimit?.includes(';r=3;')]).toEqual([200, true]);
    expect((await limiter?.peek('cart'))?.remaining).toBe(3);
    expect((await decide(3))[0]).toBe(200);
    // Spent: refused as a request of cost 1 is, with its Retry-After; nothing taken either way.
    const zero = await decide(0);
    const one = await decide(1);
    expect(zero[0]).toBe(429);
    expect(zero).toEqual(one);
    expect(Number(zero[2])).toBeGreaterThan(0);
    // On Redis, the refusal is remembered (block cache): the next probe is refused without a call.
    expect(await decide(0)).toEqual(one);
    expect(blockCacheHits()).toBe(store() === undefined ? 0 : 2);
    // Counted like any request: two admitted, three limited, under the key.
    expect(decided.map((d) => [d.key, d.allowed])).toEqual([
      ['cart', true],
      ['cart', true],
      ['cart', false],
      ['cart', false],
      ['cart', false],
    ]);
    // Once a unit is back, a request of cost 0 passes again and leaves it there.
    clock.advance(Number(one[2]) * 1000);
    const remaining = (await limiter?.peek('cart'))?.remaining;
    expect(remaining).toBeGreaterThanOrEqual(1);
    expect((await decide(0))[0]).toBe(200);
    expect((await limiter?.peek('cart'))?.remaining).toBe(remaining);
  });

  test.each(POLICIES)('several limits, all or none: $algorithm', async (policy) => {
    const perSku = createLimiter({
      rate: '5/1m',
      clock,
      prefix: `zero-cost-sku-${++prefixes}`,
      timeoutMs: 2000,
      ...(store() === undefined ? {} : { store: store() as Store }),
    });
    const limits = createHttpLimiter<Req, () => void>([{ limiter: perSku, key: 'sku' }, options(policy)]);
    const [, perCart] = limits.limiters;
    const decide = async (items: number) => seen(await limits.decide({ items }, HTTP))[0];
    expect(await decide(0)).toBe(200);
    expect([(await perSku.peek('sku')).remaining, (await perCart?.peek('cart'))?.remaining]).toEqual([4, 3]);
    expect(await decide(3)).toBe(200);
    // The cart's limit is spent: refused, and the SKU's limit keeps its units.
    expect(await decide(0)).toBe(429);
    expect((await perSku.peek('sku')).remaining).toBe(3);
  });

  test('a fixed cost of 0 takes the same path', async () => {
    const limits = createHttpLimiter<Req, () => void>(options({ rate: '1/1m' }, { cost: 0 }));
    expect(seen(await limits.decide({ items: 0 }, HTTP))[0]).toBe(200);
    await limits.limiters[0]?.consume('cart', { cost: 1 });
    // Not the in-process fast path, which would look without refusing.
    expect(limits.decideSync({ items: 0 }, HTTP)).toBeUndefined();
    expect(seen(await limits.decide({ items: 0 }, HTTP))[0]).toBe(429);
  });
});

test('a leased limit: a probe asks the store, and takes no lease of units (Redis)', async () => {
  const clock = fakeClock();
  const store = (redisStore ??= new RedisStore({ client: redis.client() }));
  const limits = createHttpLimiter<Req, () => void>({
    rate: '4/1m',
    algorithm: 'fixed-window',
    clock,
    store,
    key: 'cart',
    prefix: `zero-cost-lease-${++prefixes}`,
    timeoutMs: 2000,
    lease: { size: 2, maxStaleMs: 60_000 },
    cost: (req: Req) => req.items,
  });
  const [limiter] = limits.limiters;
  const decide = async (items: number) => seen(await limits.decide({ items }, HTTP))[0];
  expect(await decide(0)).toBe(200);
  expect(await decide(0)).toBe(200);
  // Nothing was leased for the probes: the store still holds all 4.
  expect((await limiter?.peek('cart'))?.remaining).toBe(4);
  for (let i = 0; i < 4; i++) expect(await decide(1)).toBe(200);
  expect(await decide(0)).toBe(429);
});
