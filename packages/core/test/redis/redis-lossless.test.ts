import type Redis from 'ioredis';
import { MemoryStore, RedisStore } from '../../src';
import { describeLossless } from '../contract/lossless-contract';
import { useRedisServer } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';

const redis = useRedisServer();
let client: Redis;
let store: RedisStore;

beforeAll(() => {
  client = redis.client();
  store = new RedisStore({ client });
});

// One node: every limit of a request in one script call (at most one per request; the block
// cache answers some refusals without any).
describeLossless('standalone Redis, one script call per request', {
  stores: () => ({ perIp: store, perSku: store }),
  scriptCalls: () => scriptCalls(client),
  maxCallsPerRequest: 1,
});

// Limits on different stores: taken in order, the memory limit given back when Redis refuses.
describeLossless('the address limit in memory, the SKU limit on Redis (give-back)', {
  stores: () => ({ perIp: new MemoryStore(), perSku: store }),
});
describeLossless('the address limit on Redis, the SKU limit in memory (give-back)', {
  stores: () => ({ perIp: store, perSku: new MemoryStore() }),
});
