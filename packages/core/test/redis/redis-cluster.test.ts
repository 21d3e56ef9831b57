import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import {
  consumeAll,
  createConcurrencyLimiter,
  createLimiter,
  RedisStore,
  type RedisStoreClient,
} from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';
import { fakeClock } from '../contract/fake-clock';
import { escapeKeyText } from '../../src/stores/redis/redis-keys';
import { describeRulesContract } from '../contract/rules-contract';
import { describeStoreContract } from '../contract/store-contract';
import { useRedisCluster } from '../harness/redis-fixtures';
import { describeRedisRulesBehaviour } from './redis-rules-behaviour';
import { describeRedisStoreBehaviour, HOSTILE_KEYS } from './redis-store-behaviour';
import { inBatches } from './in-batches';
import { scriptCalls } from '../harness/script-calls';

const redis = useRedisCluster();
let cluster: Cluster;
let store: RedisStore;
let masters: Redis[];
/** How many contract keys each master was seen holding, by master port. */
const keysPerMaster = new Map<number, number>();

beforeAll(async () => {
  cluster = await redis.client();
  // Annotated: ioredis's Cluster must fit the narrow client type the store declares.
  const client: RedisStoreClient = cluster;
  store = new RedisStore({ client });
  masters = redis.masters();
});

// After each contract test, look at where its keys actually are: the suite is only a Cluster
// test if its keys land on every master.
afterEach(async () => {
  for (const master of masters) {
    const port = master.options.port as number;
    keysPerMaster.set(port, (keysPerMaster.get(port) ?? 0) + (await master.keys('contract-*')).length);
  }
});

describeStoreContract('RedisStore (Cluster, 3 masters)', () => store);
describeRulesContract('RedisStore (Cluster, 3 masters)', () => store);
// Issue 11: every call decided inside a batch, by the batch script, on its key's slot.
describeStoreContract('RedisStore (Cluster, 3 masters), every call in a batch', () => inBatches(store));
describeRulesContract('RedisStore (Cluster, 3 masters), every call in a batch', () => inBatches(store));

test('the contract keys were spread over all three masters', () => {
  expect(keysPerMaster.size).toBe(3);
  for (const count of keysPerMaster.values()) expect(count).toBeGreaterThan(0);
});

describeRedisRulesBehaviour('Cluster, 3 masters', { client: () => cluster, masters: () => masters });
describeRedisStoreBehaviour('Cluster, 3 masters', { client: () => cluster, masters: () => masters });

test('the escaped user key alone picks the slot: hostile text can never choose another one', async () => {
  const policy = resolvePolicy({ rate: '5/1m' });
  const slots = new Set<number>();
  for (const key of HOSTILE_KEYS) {
    const full = store.keyOf({ prefix: 'slots', key, policy });
    const slot = (await cluster.cluster('KEYSLOT', full)) as number;
    expect(slot).toBe(await cluster.cluster('KEYSLOT', escapeKeyText(key)));
    slots.add(slot);
  }
  // Different keys spread over the slots instead of piling onto one.
  expect(slots.size).toBeGreaterThan(HOSTILE_KEYS.length / 2);
});

test('queue, warm-up and cancel work on Cluster: every key of one decision in the user key slot', async () => {
  const { createLimiter } = await import('../../src');
  const now = 1_700_006_400_000;
  const limiter = createLimiter({
    rules: [
      { rate: '5r/s', queue: { maxWaitMs: 1000 } },
      { algorithm: 'fixed-window', rate: '100/1m' },
    ],
    store,
    prefix: 'cluster-queue',
    clock: () => now,
    timeoutMs: 10_000,
  });
  const keys = ['sku:1', 'sku:2', 'sku:3', 'sku:4', 'sku:5', 'sku:6'];
  for (const key of keys) {
    const decisions = [];
    for (let i = 0; i < 7; i++) decisions.push(await limiter.consume(key));
    expect(decisions.map((d) => (d.allowed ? d.delayMs : -1))).toEqual([0, 200, 400, 600, 800, 1000, -1]);
    expect(await limiter.cancel(decisions[3] as (typeof decisions)[number])).toBe(true);
    expect((await limiter.consume(key)).delayMs).toBe(1000); // the cancelled turn was taken back
  }
  const warming = createLimiter({
    rate: '2r/s',
    warmup: '4s',
    store,
    prefix: 'cluster-warm',
    clock: () => now,
  });
  for (const key of keys) expect((await warming.consume(key)).allowed).toBe(true);
  // The keys of these decisions live on more than one master.
  let holding = 0;
  for (const master of masters) if ((await master.keys('cluster-*')).length > 0) holding++;
  expect(holding).toBeGreaterThan(1);
});

test('block on Cluster: the block record shares the user key slot; blocked keys are refused, with several rules and in batches', async () => {
  const clock = fakeClock();
  const limiter = createLimiter({
    rate: ['1/1h', '100/1d'],
    store,
    prefix: 'cluster-block',
    clock,
    block: { duration: '10m', backoff: 2 },
    timeoutMs: 10_000,
    blockCache: false,
  });
  const keys = Array.from({ length: 12 }, (_, i) => `user:${i}`);
  // At once: the same slot's requests share batch calls.
  await Promise.all(keys.map((key) => limiter.consume(key)));
  const refused = await Promise.all(keys.map((key) => limiter.consume(key)));
  expect(refused.map((d) => d.reason)).toEqual(keys.map(() => 'limited'));
  clock.advance(60_000);
  const blocked = await Promise.all(keys.map((key) => limiter.consume(key)));
  expect(blocked.map((d) => [d.reason, d.retryAfterMs])).toEqual(keys.map(() => ['blocked', 540_000]));
  for (const key of keys) {
    const blockKey = store.blockKeyOf({ prefix: 'cluster-block', key });
    expect(calculateSlot(blockKey)).toBe(calculateSlot(escapeKeyText(key)));
    expect(await cluster.exists(blockKey)).toBe(1);
  }
  let holding = 0;
  for (const master of masters) if ((await master.keys('cluster-block:*:block@1')).length > 0) holding++;
  expect(holding).toBeGreaterThan(1);
});

test('batches are made per slot: many keys at once, no CROSSSLOT, each key exact; a hot key batches', async () => {
  const batching = new RedisStore({ client: cluster });
  const policy = resolvePolicy({ algorithm: 'fixed-window', rate: '10/1h' });
  const keys = Array.from({ length: 40 }, (_, i) => `sku:${i}`);
  const slots = new Set(keys.map((key) => calculateSlot(batching.keyOf({ prefix: 'by-slot', key, policy }))));
  expect(slots.size).toBe(keys.length);
  for (const master of masters) await master.config('RESETSTAT');
  // 20 requests per key, the keys interleaved, and 500 on one hot key: all asked at once.
  const asked = [
    ...Array.from({ length: 20 * keys.length }, (_, i) => keys[i % keys.length] as string),
    ...Array.from({ length: 500 }, () => 'sku:hot'),
  ];
  const verdicts = await Promise.all(
    asked.map((key) => batching.consume({ prefix: 'by-slot', key, policy, cost: 1 })),
  );
  for (const key of [...keys, 'sku:hot']) {
    const admitted = verdicts.filter((v, i) => asked[i] === key && v.allowed);
    expect([key, admitted.length]).toEqual([key, 10]);
  }
  // Per slot: two calls alone, then one per 64 waiting: 40 slots × (2 + 1) and 2 + ceil(498 / 64).
  // (Calls that met NOSCRIPT after an earlier test's SCRIPT FLUSH were sent again: not counted.)
  let failed = 0;
  for (const master of masters) {
    const info = await master.info('commandstats');
    for (const match of info.matchAll(/^cmdstat_evalsha:.*failed_calls=(\d+)/gm)) failed += Number(match[1]);
  }
  expect((await scriptCalls(...masters)) - failed).toBe(keys.length * 3 + 2 + Math.ceil(498 / 64));
});

/** Script calls made on the masters since their RESETSTAT, less those that met NOSCRIPT and were sent again. */
async function callsMade(): Promise<number> {
  let failed = 0;
  for (const master of masters) {
    const info = await master.info('commandstats');
    for (const match of info.matchAll(/^cmdstat_evalsha:.*failed_calls=(\d+)/gm)) failed += Number(match[1]);
  }
  return (await scriptCalls(...masters)) - failed;
}

test('joint decisions batch per slot: one slot shares calls, exact; parts on two slots go in order, exact', async () => {
  const batching = new RedisStore({ client: cluster });
  const clock = fakeClock();
  const perUser = createLimiter({
    rate: '100/1h',
    store: batching,
    prefix: 'cj-user',
    clock,
    timeoutMs: 10_000,
  });
  const perSku = createLimiter({ rate: '5/1h', store: batching, prefix: 'cj-sku', clock, timeoutMs: 10_000 });
  const joint = (user: string, sku: string) =>
    consumeAll([
      { limiter: perUser, key: user },
      { limiter: perSku, key: sku },
    ]);
  await joint('warm', 'warm'); // scripts loaded on the slot's master
  for (const master of masters) await master.config('RESETSTAT');
  // One user key for both limits: one slot, one joint call per request, batched.
  const together = await Promise.all(Array.from({ length: 300 }, () => joint('warm', 'warm')));
  expect(together.filter((all) => all.every((d) => d?.allowed === true))).toHaveLength(4);
  expect(await callsMade()).toBe(MAX_IN_FLIGHT + Math.ceil((300 - MAX_IN_FLIGHT) / 64));
  // Two keys on two slots: canJoin says no, the limits are asked in order; still exact.
  const policy = resolvePolicy({ rate: '5/1h' });
  const [user, sku] = ['u:1', 's:1'];
  expect(calculateSlot(batching.keyOf({ prefix: 'cj-user', key: user, policy }))).not.toBe(
    calculateSlot(batching.keyOf({ prefix: 'cj-sku', key: sku, policy })),
  );
  const apart = await Promise.all(Array.from({ length: 50 }, () => joint(user, sku)));
  expect(apart.filter((all) => all.every((d) => d?.allowed === true))).toHaveLength(5);
  expect((await perUser.peek(user)).remaining).toBe(95);
});

test('permits batch per slot on Cluster: 200 concurrent acquires of one key, exactly max pass, in fewer calls', async () => {
  const limiter = createConcurrencyLimiter({
    max: 50,
    store: new RedisStore({ client: cluster }),
    prefix: 'cluster-permits',
    timeoutMs: 10_000,
  });
  await (await limiter.acquire('k')).permit?.release(); // scripts loaded on the slot's master
  for (const master of masters) await master.config('RESETSTAT');
  const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.acquire('k')));
  expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
  expect(await callsMade()).toBe(MAX_IN_FLIGHT + Math.ceil((200 - MAX_IN_FLIGHT) / 64));
  await Promise.all(decisions.map((d) => d.permit?.release()));
  expect(await limiter.inFlight('k')).toBe(0);
});
