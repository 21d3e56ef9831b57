import type Redis from 'ioredis';
import { consumeAll, createLimiter, RedisStore } from '../../src';
import { describeRulesContract } from '../contract/rules-contract';
import { describeStoreContract } from '../contract/store-contract';
import { fakeClock } from '../contract/fake-clock';
import { useRedisCluster } from '../harness/redis-fixtures';
import { OTHER_CLIENT_KINDS, openClusterClient, type OpenClient } from '../harness/store-clients';
import { inBatches } from './in-batches';
import { describeRedisRulesBehaviour } from './redis-rules-behaviour';
import { describeRedisStoreBehaviour } from './redis-store-behaviour';

/**
 * Issue 14 item 2: redis-cluster.test.ts's suites on each other client's cluster client
 * (node-redis 4, 5 and 6 `createCluster`, iovalkey `Cluster`): each script call routed by its
 * first key, batches made per slot. Reads go through a plain client per master.
 */
const redis = useRedisCluster();
let masters: Redis[];

beforeAll(() => {
  masters = redis.masters();
});

describe.each(OTHER_CLIENT_KINDS)('RedisStore on a %s cluster client', (kind) => {
  let open: OpenClient;
  let store: RedisStore;
  let reader: Awaited<ReturnType<typeof redis.client>>;
  beforeAll(async () => {
    open = await openClusterClient(kind, redis.cluster().nodes);
    store = new RedisStore({ client: open.client });
    reader = await redis.client();
  });
  afterAll(() => open.close());

  const target = { client: () => reader, masters: () => masters, storeClient: () => open.client };

  describeStoreContract(`Cluster, ${kind}`, () => store);
  describeRulesContract(`Cluster, ${kind}`, () => store);
  describeStoreContract(`Cluster, ${kind}, every call in a batch`, () => inBatches(store));
  describeRulesContract(`Cluster, ${kind}, every call in a batch`, () => inBatches(store));
  describeRedisRulesBehaviour(`Cluster, ${kind}`, target);
  describeRedisStoreBehaviour(`Cluster, ${kind}`, target);

  test('keys of many slots, decided concurrently: each on its own node, exact per key', async () => {
    const limiter = createLimiter({ rate: '3/1h', store, prefix: `spread-${kind}`, timeoutMs: 10_000 });
    const keys = Array.from({ length: 40 }, (_, i) => `user:${i}`);
    const decisions = await Promise.all(
      keys.flatMap((key) => [1, 2, 3, 4, 5].map(() => limiter.consume(key))),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3 * keys.length);
    let held = 0;
    for (const master of masters) held += (await master.keys(`spread-${kind}:*`)).length;
    expect(held).toBe(keys.length);
  });

  test('several limits on one slot go as one joint call; on two slots each goes its own way', async () => {
    const clock = fakeClock();
    const perUser = createLimiter({
      rate: '100/1h',
      store,
      prefix: `joint-a-${kind}`,
      clock,
      timeoutMs: 10_000,
    });
    const perUserSku = createLimiter({
      rate: '5/1h',
      store,
      prefix: `joint-b-${kind}`,
      clock,
      timeoutMs: 10_000,
    });
    const decisions = await Promise.all(
      Array.from({ length: 30 }, () =>
        consumeAll([
          { limiter: perUser, key: 'u1' },
          { limiter: perUserSku, key: 'u1' },
        ]),
      ),
    );
    expect(decisions.filter((all) => all.every((d) => d?.allowed === true))).toHaveLength(5);
    expect((await perUser.peek('u1')).remaining).toBe(95);
    const apart = await consumeAll([
      { limiter: perUser, key: 'u2' },
      { limiter: perUserSku, key: 'another-slot' },
    ]);
    expect(apart.every((d) => d?.allowed === true)).toBe(true);
  });
});
