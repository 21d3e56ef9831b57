import type Redis from 'ioredis';
import { createLimiter, RedisStore, SluiceConfigError, type RedisStoreClient } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { MAX_POLICY_SCRIPTS } from '../../src/stores/redis/redis-store';
import { STATE_KINDS } from '../../src/stores/redis/scripts';
import { describeRulesContract } from '../contract/rules-contract';
import { describeStoreContract } from '../contract/store-contract';
import { useRedisServer } from '../harness/redis-fixtures';
import { describeRedisRulesBehaviour } from './redis-rules-behaviour';
import { describeRedisStoreBehaviour } from './redis-store-behaviour';

const redis = useRedisServer();
let client: Redis;
let store: RedisStore;

beforeAll(() => {
  // Annotated: ioredis's Redis must fit the narrow client type the store declares.
  const typed: RedisStoreClient = redis.client();
  client = typed as Redis;
  store = new RedisStore({ client });
});

describeStoreContract('RedisStore (standalone)', () => store);
describeRulesContract('RedisStore (standalone)', () => store);

describeRedisRulesBehaviour('standalone', { client: () => client, masters: () => [client] });
describeRedisStoreBehaviour('standalone', { client: () => client, masters: () => [client] });

describe('RedisStore options', () => {
  test.each([
    [undefined, 'options'],
    [{}, 'client'],
    [{ client: {} }, 'client'],
    [{ client: 'redis://localhost' }, 'client'],
    [{ client: undefined, prefix: 'x' }, 'client'],
    [{ clients: [] }, 'clients'],
  ])('%p is rejected naming %s', (options, option) => {
    expect(() => new RedisStore(options as never)).toThrow(SluiceConfigError);
    expect(() => new RedisStore(options as never)).toThrow(expect.objectContaining({ option }));
  });

  test.each([[''], [42]])('prefix %p is rejected', (prefix) => {
    expect(() => new RedisStore({ client, prefix: prefix as string })).toThrow(
      expect.objectContaining({ option: 'prefix' }),
    );
  });

  test('an unrecognised client is refused naming client and listing what is accepted', () => {
    const error = (() => {
      try {
        new RedisStore({ client: { get: () => Promise.resolve(null) } as never });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(SluiceConfigError);
    expect(error).toMatchObject({ option: 'client' });
    expect(String((error as Error).message)).toMatch(
      /ioredis.*iovalkey.*node-redis.*createClient.*createCluster/,
    );
  });

  test('a client whose defineCommand adds no method is refused at construction', () => {
    const fake = { defineCommand: () => undefined, del: () => Promise.resolve(0) };
    expect(() => new RedisStore({ client: fake })).toThrow(/defineCommand did not add the script/);
  });

  test('scripts are defined once per client, however many stores share it', () => {
    const fresh = redis.client();
    const spy = jest.spyOn(fresh, 'defineCommand');
    new RedisStore({ client: fresh });
    new RedisStore({ client: fresh, prefix: 'other' });
    // One script per kind of state (each algorithm, warm-up and the packed sliding log), the
    // several-rules one, give-back and the batch script.
    expect(spy).toHaveBeenCalledTimes(STATE_KINDS.length + 3);
  });

  test(`a policy gets a script of its own on first use, up to ${MAX_POLICY_SCRIPTS} per client; later ones share their kind's`, async () => {
    const fresh = redis.client();
    const spy = jest.spyOn(fresh, 'defineCommand');
    const stores = [new RedisStore({ client: fresh }), new RedisStore({ client: fresh, prefix: 'b' })];
    expect(spy).toHaveBeenCalledTimes(STATE_KINDS.length + 3);
    const count = MAX_POLICY_SCRIPTS + 6;
    for (let limit = 1; limit <= count; limit++) {
      // The same numbers in another policy object, and on another store of the client: one script.
      for (const [i, store] of stores.entries()) {
        const policy = resolvePolicy({ algorithm: 'fixed-window', rate: `${limit}/1m` });
        const verdict = await store.consume({ prefix: `own-${i}`, key: `k${limit}`, policy, cost: 1 });
        expect(verdict).toMatchObject({ allowed: true, limit, remaining: limit - 1 });
      }
    }
    expect(spy).toHaveBeenCalledTimes(STATE_KINDS.length + 3 + MAX_POLICY_SCRIPTS);
    const info = await fresh.info('memory');
    expect(Number(/number_of_cached_scripts:(\d+)/.exec(info)?.[1])).toBeGreaterThanOrEqual(
      MAX_POLICY_SCRIPTS,
    );
  });

  test('the store prefix goes before the limiter prefix', async () => {
    const prefixed = new RedisStore({ client, prefix: 'app' });
    const limiter = createLimiter({ rate: '5/1m', store: prefixed, prefix: 'login' });
    await limiter.consume('user:42');
    expect(await client.pttl('app:login:{user:42}:gcra@2')).toBeGreaterThan(0);
  });

  test("the client's keyPrefix lands before every key", async () => {
    const withKeyPrefix = redis.client({ keyPrefix: 'tenant-a:' });
    const policy = resolvePolicy({ rate: '5/1m' });
    await new RedisStore({ client: withKeyPrefix }).consume({ prefix: 'sluice', key: 'k', policy, cost: 1 });
    expect(await client.exists('tenant-a:sluice:{k}:gcra@2')).toBe(1);
    await new RedisStore({ client: withKeyPrefix }).reset({ prefix: 'sluice', key: 'k', policy });
    expect(await client.exists('tenant-a:sluice:{k}:gcra@2')).toBe(0);
  });

  test('a time that is not whole epoch ms rejects instead of computing on a fraction', async () => {
    const policy = resolvePolicy({ rate: '5/1m' });
    await expect(store.consume({ prefix: 'p', key: 'k', policy, cost: 1, nowMs: 1.5 })).rejects.toThrow(
      expect.objectContaining({ option: 'nowMs' }),
    );
  });
});
