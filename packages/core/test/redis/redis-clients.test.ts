import type Redis from 'ioredis';
import { consumeAll, createLimiter, MemoryStore, RedisStore } from '../../src';
import { describeOverridesContract } from '../contract/overrides-contract';
import { describeRulesContract } from '../contract/rules-contract';
import { describeStoreContract } from '../contract/store-contract';
import { fakeClock } from '../contract/fake-clock';
import { freePort } from '../harness/free-port';
import { useRedisServer } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';
import { OTHER_CLIENT_KINDS, openClient, openDeadClient, type OpenClient } from '../harness/store-clients';
import { MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';
import { inBatches } from './in-batches';
import { describeRedisRulesBehaviour } from './redis-rules-behaviour';
import { describeRedisStoreBehaviour } from './redis-store-behaviour';

/**
 * Issue 14 item 2: every standalone store suite that runs on ioredis (redis-standalone,
 * redis-batching-contract, consume-all-redis) runs again on each other client the store takes —
 * node-redis 4, 5 and 6 and iovalkey — through the one narrow interface chosen at construction.
 * Reads and SCRIPT FLUSH go through a plain ioredis client to the same server.
 */
const redis = useRedisServer();
let reader: Redis;

beforeAll(() => {
  reader = redis.client();
});

describe.each(OTHER_CLIENT_KINDS)('RedisStore on %s', (kind) => {
  let open: OpenClient;
  let store: RedisStore;
  let unbatched: RedisStore;
  beforeAll(async () => {
    open = await openClient(kind, redis.server());
    store = new RedisStore({ client: open.client });
    unbatched = new RedisStore({ client: open.client, batch: false });
  });
  afterAll(() => open.close());

  // The harness types each client as RedisStoreClient: node-redis's and iovalkey's own types fit it.
  const target = { client: () => reader, masters: () => [reader], storeClient: () => open.client };

  describeStoreContract(`standalone, ${kind}`, () => store);
  describeRulesContract(`standalone, ${kind}`, () => store);
  describeStoreContract(`${kind}, batch: false`, () => unbatched);
  describeStoreContract(`${kind}, every call in a batch`, () => inBatches(store));
  describeRulesContract(`${kind}, every call in a batch`, () => inBatches(store));
  describeOverridesContract(`${kind}, every call in a batch`, () => inBatches(store));
  describeRedisRulesBehaviour(kind, target);
  describeRedisStoreBehaviour(kind, target);

  test('a decision is one script call, and a batch of many is one', async () => {
    const limiter = createLimiter({ rate: '100/1h', store, prefix: `calls-${kind}`, timeoutMs: 10_000 });
    await limiter.consume('warm');
    await reader.config('RESETSTAT');
    await limiter.consume('one');
    expect(await scriptCalls(reader)).toBe(1);
    await reader.config('RESETSTAT');
    const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.consume('many')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
    // Two go alone (the slot's places in flight); the rest wait and share a few batch calls.
    expect(await scriptCalls(reader)).toBeLessThan(10);
  });

  test('several limits on one node: one joint call, all or none, exact under a flood, batched', async () => {
    const clock = fakeClock();
    const perIp = createLimiter({
      rate: '100/1h',
      store,
      prefix: `joint-ip-${kind}`,
      clock,
      timeoutMs: 10_000,
    });
    const perSku = createLimiter({
      rate: '5/1h',
      store,
      prefix: `joint-sku-${kind}`,
      clock,
      timeoutMs: 10_000,
    });
    // The joint script loaded first: a first call meets NOSCRIPT and sends it again (two calls).
    await consumeAll([
      { limiter: perIp, key: 'warm' },
      { limiter: perSku, key: 'warm' },
    ]);
    await reader.config('RESETSTAT');
    const decisions = await Promise.all(
      Array.from({ length: 60 }, () =>
        consumeAll([
          { limiter: perIp, key: 'ip' },
          { limiter: perSku, key: 'sku' },
        ]),
      ),
    );
    expect(decisions.filter((all) => all.every((d) => d?.allowed === true))).toHaveLength(5);
    // Batched: the first two alone, then the 58 waiting in one call (less a first call of the batch
    // script that met NOSCRIPT and was sent again).
    const failed = Number(
      /^cmdstat_evalsha:.*failed_calls=(\d+)/m.exec(await reader.info('commandstats'))?.[1] ?? 0,
    );
    expect((await scriptCalls(reader)) - failed).toBe(MAX_IN_FLIGHT + 1);
    // All or none: the per-IP limit spent only what both admitted.
    expect((await perIp.peek('ip')).remaining).toBe(95);
  });

  test('a dead port: every decision goes to onStoreError (insurance), none hangs', async () => {
    const dead = await openDeadClient(kind, { host: '127.0.0.1', port: await freePort() });
    try {
      const errors: unknown[] = [];
      const limiter = createLimiter({
        rate: '3/1h',
        store: new RedisStore({ client: dead.client }),
        prefix: 'dead',
        clock: fakeClock(),
        timeoutMs: 1000,
        onStoreError: { insurance: new MemoryStore() },
      });
      limiter.on('storeError', ({ error }) => errors.push(error));
      const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.consume('k')));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
      expect(decisions.every((d) => d.degraded === 'insurance')).toBe(true);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await dead.close();
    }
  });

  test('a closed client: decisions go to onStoreError (fail-closed), the store keeps answering', async () => {
    const own = await openClient(kind, redis.server());
    const limiter = createLimiter({
      rate: '3/1h',
      store: new RedisStore({ client: own.client }),
      prefix: `closed-${kind}`,
      timeoutMs: 1000,
      onStoreError: 'fail-closed',
    });
    expect((await limiter.consume('k')).allowed).toBe(true);
    await own.close();
    const errors: unknown[] = [];
    limiter.on('storeError', ({ error }) => errors.push(error));
    const decision = await limiter.consume('k');
    expect(decision).toMatchObject({ allowed: false, degraded: 'fail-closed' });
    expect(errors).toHaveLength(1);
  });
});
