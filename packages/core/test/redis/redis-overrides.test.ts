import type Redis from 'ioredis';
import { createLimiter, RedisStore } from '../../src';
import { describeOverridesContract } from '../contract/overrides-contract';
import { useRedisServer } from '../harness/redis-fixtures';
import { scanKeys } from './redis-store-behaviour';

const redis = useRedisServer();
let client: Redis;
let store: RedisStore;

beforeAll(() => {
  client = redis.client();
  store = new RedisStore({ client });
});

describeOverridesContract('RedisStore (standalone)', () => store);

describe('RedisStore: per-key overrides', () => {
  test('an overridden key keeps its state in its own key, named after the override rate, with a TTL', async () => {
    const overrides: Record<string, string | string[]> = { 'sku:1001': '10r/s' };
    const limiter = createLimiter({ rate: '1r/s', store, prefix: 'flash', overrides, timeoutMs: 10_000 });
    await limiter.consume('sku:1001');
    await limiter.consume('sku:2002');
    overrides['sku:1001'] = ['10r/s', '1000/1h'];
    await limiter.consume('sku:1001');
    const keys = await scanKeys({ client: () => client, masters: () => [client] }, 'flash');
    expect(keys.sort()).toEqual([
      'flash:{sku:1001}:gcra@2:10r/s',
      'flash:{sku:1001}:gcra@2:10r/s,1000/1h:0',
      'flash:{sku:1001}:gcra@2:10r/s,1000/1h:1',
      'flash:{sku:2002}:gcra@2',
    ]);
    for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(0);
  });
});
