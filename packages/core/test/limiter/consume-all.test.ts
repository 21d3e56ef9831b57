import {
  consumeAll,
  createLimiter,
  MemoryStore,
  RedisStore,
  type Decision,
  type Limiter,
  type MetricsSink,
  type Store,
} from '../../src';
import { takeAll } from '../../src/limiter/consume-all';
import { refundAll } from '../../src/limiter/refund-all';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

const redis = useRedisServer();

const stores: Array<[string, () => Store]> = [
  ['memory', () => new MemoryStore()],
  ['Redis', () => new RedisStore({ client: redis.client() })],
];

describe.each(stores)('consumeAll on %s', (_name, storeOf) => {
  let store: Store;
  beforeAll(() => {
    store = storeOf();
  });
  const limiter = (prefix: string, options: { rate: string | string[] }): Limiter =>
    createLimiter({ ...options, store, prefix: `${prefix}-${_name}`, clock: fakeClock(), timeoutMs: 10_000 });

  // A request admitted by every limit that will not run (held, its client gone) gives back what
  // each took, exactly: the HTTP layer's cancel of a held request with several limits.
  test.each(['fixed-window', 'sliding-window', 'sliding-log', 'gcra', 'leaky-bucket'] as const)(
    'takeAll: the refunds of an admitted request give back exactly what each limit took (%s)',
    async (algorithm) => {
      const clock = fakeClock();
      const ordered = _name === 'Redis' ? [false, true] : [false];
      for (const lease of ordered) {
        const tag = `${algorithm}-${lease ? 'lease' : 'joint'}-${_name}`;
        const perIp = createLimiter({
          rate: '100/1h',
          store,
          prefix: `refund-ip-${tag}`,
          clock,
          timeoutMs: 10_000,
          // With a lease the limits are taken one after the other (the ordered path).
          ...(lease ? { lease: { size: 10, maxStaleMs: 60_000 } } : {}),
        });
        const shared = createLimiter({
          algorithm,
          rate: '3/1h',
          store,
          prefix: `refund-sku-${tag}`,
          clock,
          timeoutMs: 10_000,
        });
        const request = [
          { limiter: perIp, key: 'ip' },
          { limiter: shared, key: 'sku' },
        ];
        await takeAll(request);
        const second = await takeAll(request);
        expect(second.decisions.map((d) => d?.allowed)).toEqual([true, true]);
        expect(second.refunds.every((refund) => refund !== undefined)).toBe(true);
        expect((await shared.peek('sku')).remaining).toBe(1);
        await refundAll(second.refunds);
        expect((await shared.peek('sku')).remaining).toBe(2);
        // (A leased unit goes back to this instance's lease, which a peek of Redis does not see.)
        if (!lease) expect((await perIp.peek('ip')).remaining).toBe(99);
        // A refused request has nothing left to give back: what it took is already given back.
        await takeAll(request);
        await takeAll(request);
        const refused = await takeAll(request);
        expect(refused.decisions[1]?.allowed).toBe(false);
        expect(refused.refunds.every((refund) => refund === undefined)).toBe(true);
      }
    },
  );

  test('one limiter twice with one key takes twice, all or none', async () => {
    const five = limiter('twice', { rate: '5/1h' });
    const twice = () =>
      consumeAll([
        { limiter: five, key: 'k' },
        { limiter: five, key: 'k' },
      ]);
    expect((await twice()).map((d) => d?.allowed)).toEqual([true, true]);
    expect((await twice()).map((d) => d?.allowed)).toEqual([true, true]);
    // One unit left: the second half would refuse, so the first takes nothing either.
    expect((await twice()).some((d) => d?.allowed === false)).toBe(true);
    expect((await five.peek('k')).remaining).toBe(1);
  });

  test('a limiter with several rules is one part: its rules and the others, all or none', async () => {
    const user = limiter('rules-user', { rate: ['10/1s', '100/1h'] });
    const sku = limiter('rules-sku', { rate: '3/1h' });
    for (let i = 0; i < 6; i++) {
      await consumeAll([
        { limiter: user, key: 'u' },
        { limiter: sku, key: 's', cost: 1 },
      ]);
    }
    const peek = await user.peek('u');
    expect(peek.limits?.map((l) => l.remaining)).toEqual([7, 97]);
    expect((await sku.peek('s')).remaining).toBe(0);
  });

  test('each limit reports its own decision to its metrics, once', async () => {
    const seen: Array<[string, boolean]> = [];
    const sink: MetricsSink = {
      limiter: ({ name }) => ({
        decided: (decision: Decision) => seen.push([name, decision.allowed]),
        storeCall: () => undefined,
        storeError: () => undefined,
        storeUp: () => undefined,
        blockCacheHit: () => undefined,
        leaseCall: () => undefined,
      }),
    };
    const ip = createLimiter({ rate: '10/1h', store, prefix: `m-ip-${_name}`, name: 'ip', metrics: sink });
    const sku = createLimiter({ rate: '1/1h', store, prefix: `m-sku-${_name}`, name: 'sku', metrics: sink });
    const both = () =>
      consumeAll([
        { limiter: ip, key: 'a' },
        { limiter: sku, key: 'b' },
      ]);
    await both();
    await both();
    expect(seen).toEqual([
      ['ip', true],
      ['sku', true],
      ['ip', true],
      ['sku', false],
    ]);
  });

  test('a long key is one state whichever path takes it (joint, alone, give-back)', async () => {
    // Over 42 characters the memory store holds a key by its digest: the joint path must too.
    const longKey = `user:${'x'.repeat(15_000)}`;
    const user = limiter('long-user', { rate: '3/1h' });
    const sku = limiter('long-sku', { rate: '1/1h' });
    const both = () =>
      consumeAll([
        { limiter: user, key: longKey },
        { limiter: sku, key: 'sku' },
      ]);
    expect((await both()).map((d) => d?.allowed)).toEqual([true, true]);
    expect((await user.peek(longKey)).remaining).toBe(2);
    expect((await user.consume(longKey)).remaining).toBe(1);
    // The SKU refuses: the long key's unit is not taken (or given back).
    expect((await both()).some((d) => d?.allowed === false)).toBe(true);
    expect((await user.peek(longKey)).remaining).toBe(1);
  });

  test('a cost the later limit cannot pass takes nothing from the earlier one', async () => {
    const ip = limiter('cost-ip', { rate: '100/1h' });
    const sku = limiter('cost-sku', { rate: '5/1h' });
    const [first, second] = await consumeAll([
      { limiter: ip, key: 'ip', cost: 3 },
      { limiter: sku, key: 'sku', cost: 6 },
    ]);
    expect(second).toMatchObject({ allowed: false, reason: 'cost-exceeds-capacity' });
    expect(first?.allowed ?? true).toBe(true);
    expect((await ip.peek('ip')).remaining).toBe(100);
  });
});

test('a refund whose store throws instead of rejecting fails neither the request nor the other refunds', async () => {
  const redisStore = new RedisStore({ client: redis.client() });
  const given: string[] = [];
  // Parts taken in turn (no joint call), on a store whose give-back of one key throws.
  const store: Store = {
    consume: (request) => redisStore.consume(request),
    consumeRules: (request) => redisStore.consumeRules(request),
    reset: (request) => redisStore.reset(request),
    giveBackTaken: (part, receipts) => {
      if (part.key === 'broken') throw new Error('giveBackTaken is broken');
      given.push(part.key);
      return redisStore.giveBackTaken(part, receipts);
    },
    canJoin: () => false,
    consumeAll: (parts) => redisStore.consumeAll(parts),
  };
  const open = (prefix: string) =>
    createLimiter({
      rate: '10/1h',
      store,
      prefix: `refund-${prefix}`,
      clock: fakeClock(),
      timeoutMs: 10_000,
    });
  const [a, b] = [open('a'), open('b')];
  const shut = createLimiter({
    rate: '1/1h',
    store,
    prefix: 'refund-shut',
    clock: fakeClock(),
    timeoutMs: 10_000,
  });
  await shut.consume('s');
  const decisions = await consumeAll([
    { limiter: a, key: 'broken' },
    { limiter: b, key: 'fine' },
    { limiter: shut, key: 's' },
  ]);
  expect(decisions.map((d) => d?.allowed)).toEqual([true, true, false]);
  // The second refund ran though the first threw: its unit is back.
  expect(given).toEqual(['fine']);
  expect((await b.peek('fine')).remaining).toBe(10);
});
