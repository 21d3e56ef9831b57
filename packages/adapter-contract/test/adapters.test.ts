import { RedisStore } from '@sluice/core';
import { useRedisServer } from '../../core/test/harness/redis-fixtures';
import { describeAdapterContract, type StoreUnderTest } from './adapter-contract';
import { describeCountWhen } from './count-when-contract';
import { DRIVERS } from './framework-drivers';
import { describeFailingCallbacks } from './failing-callbacks';
import { describeForgedProxies } from './forged-proxies';
import { describeHeldRequests } from './held-requests';
import { describeHostileKeys } from './hostile-keys';
import { HONO_DRIVERS } from './hono-drivers';

// One redis-server on a free loopback port for this file (never the shared one on 6379).
const redis = useRedisServer();
let redisStore: RedisStore | undefined;

const STORES: StoreUnderTest[] = [
  { name: 'memory', store: () => undefined },
  {
    name: 'redis',
    store: () => (redisStore ??= new RedisStore({ client: redis.client() })),
  },
];

for (const driver of [...DRIVERS, ...HONO_DRIVERS]) {
  describeAdapterContract(driver, STORES);
  describeHostileKeys(driver, STORES);
  describeFailingCallbacks(driver);
  describeForgedProxies(driver);
  describeHeldRequests(driver);
  describeCountWhen(driver, STORES);
}
