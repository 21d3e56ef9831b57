import { RedisStore } from '@sluice/core';
import { useRedisServer } from '../../core/test/harness/redis-fixtures';
import { describeAdapterContract, type StoreUnderTest } from './adapter-contract';
import { describeCountWhen } from './count-when-contract';
import { describeFailingCallbacks } from './failing-callbacks';
import { describeForgedProxies } from './forged-proxies';
import { describeHeldRequests } from './held-requests';
import { describeHostileKeys } from './hostile-keys';
import { NEST_DRIVERS } from './nest-drivers';

// The same contract as adapters.test.ts, run by the jest projects of Nest 11 and of Nest 12.
const redis = useRedisServer();
let redisStore: RedisStore | undefined;

const STORES: StoreUnderTest[] = [
  { name: 'memory', store: () => undefined },
  {
    name: 'redis',
    store: () => (redisStore ??= new RedisStore({ client: redis.client() })),
  },
];

for (const driver of NEST_DRIVERS) {
  describeAdapterContract(driver, STORES);
  describeHostileKeys(driver, STORES);
  describeFailingCallbacks(driver);
  describeForgedProxies(driver);
  describeHeldRequests(driver);
  describeCountWhen(driver, STORES);
}
