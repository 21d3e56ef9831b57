import { RedisStore } from '@sluice/core';
import { useRedisServer } from '../../core/test/harness/redis-fixtures';
import { describeConcurrencyContract } from './concurrency-contract';
import { CONCURRENCY_DRIVERS } from './concurrency-drivers';
import { honoConcurrencyDriver } from './hono-drivers';
import type { StoreUnderTest } from './stores-under-test';

// One redis-server on a free loopback port for this file (never the shared one on 6379).
const redis = useRedisServer();
let redisStore: RedisStore | undefined;

const STORES: StoreUnderTest[] = [
  { name: 'memory', store: () => undefined },
  { name: 'redis', store: () => (redisStore ??= new RedisStore({ client: redis.client() })) },
];

for (const driver of [...CONCURRENCY_DRIVERS, honoConcurrencyDriver()])
  describeConcurrencyContract(driver, STORES);
