import type { Cluster } from 'ioredis';
import { createLimiter, RedisStore } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { describeLossless } from '../contract/lossless-contract';
import { useRedisCluster } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';

const redis = useRedisCluster();
let cluster: Cluster;
let store: RedisStore;

beforeAll(async () => {
  cluster = await redis.client();
  store = new RedisStore({ client: cluster });
});

const IP = '203.0.113.9';
const SKU = 'sku-1';

test('the address key and the SKU key live in different slots (so no script can take both)', async () => {
  const policy = resolvePolicy({ rate: '5/1h' });
  const slotOf = (key: string): Promise<number> =>
    cluster.cluster('KEYSLOT', store.keyOf({ prefix: 'p', key, policy })) as Promise<number>;
  expect(await slotOf(IP)).not.toBe(await slotOf(SKU));
});

// Keys in different slots: taken in order, the address limit given back when the SKU refuses.
describeLossless('Redis Cluster, 3 masters, keys in different slots (give-back)', {
  stores: () => ({ perIp: store, perSku: store }),
  keys: { ip: IP, sku: SKU },
});

// Keys with one hash tag (one slot): one script call per request on Cluster too.
describeLossless('Redis Cluster, both limits keyed by one hash tag (one call)', {
  stores: () => ({ perIp: store, perSku: store }),
  keys: { ip: IP, sku: IP },
  scriptCalls: () => scriptCalls(...redis.masters()),
  maxCallsPerRequest: 1,
});

test('on Cluster, consumeAll with keys in one slot sends one script call', async () => {
  const { consumeAll } = await import('../../src');
  const a = createLimiter({ rate: '10/1m', store, prefix: 'one-slot-a', timeoutMs: 10_000 });
  const b = createLimiter({ rate: '1/1m', store, prefix: 'one-slot-b', timeoutMs: 10_000 });
  const masters = redis.masters();
  const before = await scriptCalls(...masters);
  const decisions = await consumeAll([
    { limiter: a, key: 'user-7' },
    { limiter: b, key: 'user-7' },
  ]);
  expect(decisions.map((d) => d?.allowed)).toEqual([true, true]);
  expect((await scriptCalls(...masters)) - before).toBe(1);
});
