import type Redis from 'ioredis';
import type { Policy } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { batchPolicyArgs } from '../../src/stores/redis/batch-call';
import { BATCH_SCRIPT } from '../../src/stores/redis/scripts';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

/**
 * The batch script replies an admission without delay on one key in two integers (`remaining,
 * resetMs`) instead of four: each integer a script replies costs Redis about 800 instructions.
 * Any other answer keeps four, its first `-1 - code` (negative, so the reader tells them apart).
 */
const redis = useRedisServer();
let client: Redis;

beforeAll(() => {
  client = redis.client();
});

/** 1 per second, two at once (burst 1), a queue of 2 s: admitted twice, delayed twice, limited. */
const policy: Policy = resolvePolicy({
  algorithm: 'gcra',
  rate: '1r/s',
  burst: 1,
  queue: { maxWaitMs: 2000 },
});

test('one key: an admission without delay in two integers, a delayed one and a rejection in four', async () => {
  const table = batchPolicyArgs(policy);
  const key = 'reply:{k}:gcra@2';
  const reply = (await client.eval(
    BATCH_SCRIPT,
    5,
    key,
    key,
    key,
    key,
    key,
    '1',
    ...table,
    ...['5', '1', '1', '1', String(FAKE_EPOCH), '1'],
  )) as number[];
  expect(reply).toEqual([1, 1000, 0, 2000, -1, 0, 3000, 1000, -1, 0, 4000, 2000, -2, 0, 4000, 1000]);
});
