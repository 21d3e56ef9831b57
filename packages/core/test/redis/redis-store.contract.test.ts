import { RedisStore } from '../../src';
import { describeStoreContract } from '../contract/store-contract';
import { useRedisServer } from '../harness/redis-fixtures';

const redis = useRedisServer();
let store: RedisStore;

beforeAll(() => {
  store = new RedisStore({ client: redis.client() });
});

describeStoreContract('RedisStore (standalone)', () => store);
