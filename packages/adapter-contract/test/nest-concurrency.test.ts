import { RedisStore } from '@sluice/core';
import { useRedisServer } from '../../core/test/harness/redis-fixtures';
import { describeConcurrencyContract } from './concurrency-contract';
import { NEST_CONCURRENCY_DRIVERS } from './nest-concurrency-drivers';
import type { StoreUnderTest } from './stores-under-test';

// The concurrency contract of concurrency.test.ts on `@ConcurrencyLimit`, run by the jest projects
// of Nest 11 and of Nest 12; its leak test with fewer requests (four more drivers per project).
const redis = useRedisServer();
let redisStore: RedisStore | undefined;

const STORES: StoreUnderTest[] = [
  { name: 'memory', store: () => undefined },
  { name: 'redis', store: () => (redisStore ??= new RedisStore({ client: redis.client() })) },
];

for (const driver of NEST_CONCURRENCY_DRIVERS)
  describeConcurrencyContract(driver, STORES, { mixedRequests: 2000 });
