import type Redis from 'ioredis';
import { RedisStore } from '../../src';
import { describeStoreContract } from '../contract/store-contract';
import { useRedisCluster } from '../harness/redis-fixtures';

const redis = useRedisCluster();
let store: RedisStore;
let masters: Redis[];
/** How many contract keys each master was seen holding, by master port. */
const keysPerMaster = new Map<number, number>();

beforeAll(async () => {
  store = new RedisStore({ client: await redis.client() });
  masters = redis.masters();
});

// After each contract test, look at where its keys actually are: the suite is only a Cluster
// test if its keys land on every master.
afterEach(async () => {
  for (const master of masters) {
    const keys = await master.keys('contract-*');
    keysPerMaster.set(
      master.options.port as number,
      (keysPerMaster.get(master.options.port as number) ?? 0) + keys.length,
    );
  }
});

describeStoreContract('RedisStore (Cluster, 3 masters)', () => store);

test('the contract keys were spread over all three masters', () => {
  expect(keysPerMaster.size).toBe(3);
  for (const count of keysPerMaster.values()) expect(count).toBeGreaterThan(0);
});
