import type Redis from 'ioredis';
import { RedisStore, type Store } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { BATCH_COMMAND_NAME } from '../../src/stores/redis/redis-command';
import { describeOverridesContract } from '../contract/overrides-contract';
import { describeRulesContract } from '../contract/rules-contract';
import { describeStoreContract } from '../contract/store-contract';
import { scriptCalls } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';
import { inBatches } from './in-batches';

/**
 * Issue 11, item 6: the whole store contract (every algorithm, several rules, per-key
 * overrides) both ways: with `batch: false`, one script call per decision, and with every
 * decision, give-back and reset decided inside a batch by the batch script. The default store,
 * whose sequential calls go alone, runs the same contracts in redis-standalone.test.ts.
 */
const redis = useRedisServer();
let client: Redis;
let unbatched: RedisStore;
let batched: Store;

beforeAll(() => {
  client = redis.client();
  unbatched = new RedisStore({ client, batch: false });
  batched = inBatches(new RedisStore({ client }));
});

test('inBatches really decides in a batch: two peeks alone, then one call of the batch script for two', async () => {
  // The batch script's method, as the store binds it (defineCommand ran in beforeAll).
  const batchScript = jest.spyOn(
    client as unknown as Record<string, () => Promise<unknown>>,
    BATCH_COMMAND_NAME,
  );
  const store = new RedisStore({ client });
  const policy = resolvePolicy({ rate: '5/1s' });
  await store.consume({ prefix: 'warm', key: 'k', policy, cost: 1 }); // scripts loaded
  await client.config('RESETSTAT');
  const verdict = await inBatches(store).consume({ prefix: 'probe', key: 'k', policy, cost: 1 });
  expect(verdict).toMatchObject({ allowed: true, remaining: 4 });
  expect(await scriptCalls(client)).toBe(3);
  expect(batchScript).toHaveBeenCalledTimes(1);
  // KEYS: the request's key and the peek's; the request first.
  expect(batchScript.mock.calls[0]?.slice(0, 3)).toEqual([
    '2',
    'probe:{k}:gcra@2',
    'batch-companion:{k}:gcra@2',
  ]);
  batchScript.mockRestore();
});

test('a client whose batch method throws instead of rejecting: every request of the batch fails with its error, none hangs', async () => {
  const store = new RedisStore({ client });
  const policy = resolvePolicy({ rate: '5/1s' });
  await store.consume({ prefix: 'warm', key: 'k', policy, cost: 1 }); // scripts defined
  const batchScript = jest
    .spyOn(client as unknown as Record<string, () => Promise<unknown>>, BATCH_COMMAND_NAME)
    .mockImplementation(() => {
      throw new Error('client closed');
    });
  try {
    // The first MAX_IN_FLIGHT go alone; the rest wait and leave as one batch call when one lands
    // (in a promise reaction: a throw there was an unhandled rejection, its requests never settled).
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        store.consume({ prefix: 'throws', key: `k${i % 2}`, policy, cost: 1 }),
      ),
    );
    expect(batchScript).toHaveBeenCalled();
    const failed = settled.filter((s) => s.status === 'rejected');
    expect(failed.length).toBeGreaterThan(0);
    for (const s of failed) expect((s as PromiseRejectedResult).reason).toEqual(new Error('client closed'));
  } finally {
    batchScript.mockRestore();
  }
  // The queue gave every place back: the store decides again.
  expect(await store.consume({ prefix: 'throws', key: 'k0', policy, cost: 0 })).toMatchObject({
    allowed: true,
  });
});

describeStoreContract('RedisStore, batch: false', () => unbatched);
describeStoreContract('RedisStore, every call in a batch', () => batched);
describeRulesContract('RedisStore, batch: false', () => unbatched);
describeRulesContract('RedisStore, every call in a batch', () => batched);
describeOverridesContract('RedisStore, batch: false', () => unbatched);
describeOverridesContract('RedisStore, every call in a batch', () => batched);
