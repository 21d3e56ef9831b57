import type Redis from 'ioredis';
import {
  consumeAll,
  createLimiter,
  MemoryStore,
  RedisStore,
  type Decision,
  type Limiter,
  type Policy,
  type Store,
} from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';
import { FAKE_EPOCH, fakeClock } from '../contract/fake-clock';
import { freePort } from '../harness/free-port';
import { useRedisServer } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';
import { inBatches } from './in-batches';

const redis = useRedisServer();
let client: Redis;
let store: RedisStore;

beforeAll(() => {
  client = redis.client();
  store = new RedisStore({ client });
});

const admitted = (decisions: ReadonlyArray<ReadonlyArray<Decision | undefined>>): number =>
  decisions.filter((all) => all.every((d) => d?.allowed === true)).length;

test('a Redis that fails: each limit decided by its insurance store, all or none there too', async () => {
  // A real client to a port nothing listens on, failing at once: the joint call fails.
  const dead = redis.client({ port: await freePort(), enableOfflineQueue: false, lazyConnect: true });
  const down = new RedisStore({ client: dead });
  const clock = fakeClock();
  const limiter = (prefix: string, rate: string) =>
    createLimiter({ rate, store: down, prefix, clock, onStoreError: { insurance: new MemoryStore() } });
  const perIp = limiter('down-ip', '100/1h');
  const perSku = limiter('down-sku', '5/1h');
  const errors: unknown[] = [];
  perIp.on('storeError', ({ error }) => errors.push(error));
  const decisions = await Promise.all(
    Array.from({ length: 300 }, () =>
      consumeAll([
        { limiter: perIp, key: 'ip' },
        { limiter: perSku, key: 'sku' },
      ]),
    ),
  );
  expect(admitted(decisions)).toBe(5);
  expect(decisions.flat().every((d) => d === undefined || d.degraded === 'insurance')).toBe(true);
  expect(errors.length).toBeGreaterThan(0);
  // The insurance stores spent exactly what was admitted (the peek is decided there too).
  expect(await perIp.peek('ip')).toMatchObject({ remaining: 95, degraded: 'insurance' });
});

test('a limit with lease takes the ordered path: a refused request gives its unit back to the lease', async () => {
  const clock = fakeClock();
  const perIp = createLimiter({
    rate: '100/1h',
    store,
    prefix: 'lease-ip',
    clock,
    lease: { size: 10, maxStaleMs: 60_000 },
    timeoutMs: 10_000,
  });
  const perSku = createLimiter({ rate: '5/1h', store, prefix: 'lease-sku', clock, timeoutMs: 10_000 });
  const decisions: Array<Array<Decision | undefined>> = [];
  for (let i = 0; i < 50; i++) {
    decisions.push(
      await consumeAll([
        { limiter: perIp, key: 'ip' },
        { limiter: perSku, key: 'sku' },
      ]),
    );
  }
  expect(admitted(decisions)).toBe(5);
  // One lease of 10 served all 50: the 45 refused requests gave their unit back to it (without
  // the give-back the lease would have drained and 50 units been taken from Redis).
  expect((await perIp.peek('ip')).remaining).toBe(90);
});

test('dry-run limits count with the others but never refuse', async () => {
  const clock = fakeClock();
  const enforcing = createLimiter({ rate: '5/1h', store, prefix: 'dry-enforcing', clock, timeoutMs: 10_000 });
  const dry = createLimiter({ rate: '2/1h', store, prefix: 'dry-dry', clock, timeoutMs: 10_000 });
  const decisions: Array<Array<Decision | undefined>> = [];
  for (let i = 0; i < 10; i++) {
    decisions.push(
      await consumeAll([
        { limiter: dry, key: 'k', dryRun: true },
        { limiter: enforcing, key: 'k' },
      ]),
    );
  }
  // Admitted while the enforcing limit admits, whatever the dry-run limit says.
  expect(decisions.map(([, e]) => e?.allowed)).toEqual([
    true,
    true,
    true,
    true,
    true,
    false,
    false,
    false,
    false,
    false,
  ]);
  // The dry-run limit refuses from the third on, never refusing the request.
  expect(decisions.map(([d]) => d?.allowed)).toEqual([
    true,
    true,
    false,
    false,
    false,
    false,
    false,
    false,
    false,
    false,
  ]);
  expect((await enforcing.peek('k')).remaining).toBe(0);
  // Counted only for the requests admitted, up to its own limit.
  expect((await dry.peek('k')).remaining).toBe(0);
});

/** Limiters on one store for the usual joint request: per address 100/1h, per SKU 5/1h. */
function ipAndSku(on: Store, name: string): [Limiter, Limiter] {
  const clock = fakeClock();
  return [
    createLimiter({ rate: '100/1h', store: on, prefix: `${name}-ip`, clock, timeoutMs: 10_000 }),
    createLimiter({ rate: '5/1h', store: on, prefix: `${name}-sku`, clock, timeoutMs: 10_000 }),
  ];
}

describe.each([
  ['batched', {}],
  ['batch: false', { batch: false }],
] as const)('300 concurrent joint requests, %s', (mode, options) => {
  test('exactly 5 pass [perIp 100/1h, perSku 5/1h]; batched, they share script calls', async () => {
    const [perIp, perSku] = ipAndSku(
      new RedisStore({ client, ...options }),
      `exact-${mode.replace(/\W/g, '')}`,
    );
    await perIp.peek('warm'); // scripts loaded: the count below is of the joint calls alone
    await consumeAll([
      { limiter: perIp, key: 'warm' },
      { limiter: perSku, key: 'warm' },
    ]);
    const before = await scriptCalls(client);
    const decisions = await Promise.all(
      Array.from({ length: 300 }, () =>
        consumeAll([
          { limiter: perIp, key: 'ip' },
          { limiter: perSku, key: 'sku' },
        ]),
      ),
    );
    const calls = (await scriptCalls(client)) - before;
    expect(admitted(decisions)).toBe(5);
    expect(decisions.flat().every((d) => d === undefined || d.degraded === undefined)).toBe(true);
    expect((await perIp.peek('ip')).remaining).toBe(95);
    expect((await perSku.peek('sku')).remaining).toBe(0);
    // Batched: the first two alone, then batches of 64 (the queue's default); else one call each.
    expect(calls).toBe('batch' in options ? 300 : MAX_IN_FLIGHT + Math.ceil((300 - MAX_IN_FLIGHT) / 64));
  });
});

describe('joint decisions in a batch', () => {
  test('decided in arrival order with the single decisions of their batch, each as alone', async () => {
    const batched = new RedisStore({ client });
    const [ip, sku] = [resolvePolicy({ rate: '100/1h' }), resolvePolicy({ rate: '5/1h' })];
    const part = (prefix: string, policy: Policy, cost: number) => ({
      prefix,
      key: 'k',
      policies: [policy],
      cost,
      nowMs: FAKE_EPOCH,
    });
    await batched.consume({ prefix: 'order-other', key: 'x', policy: sku, cost: 0 }); // scripts loaded
    const before = await scriptCalls(client);
    // Fill the slot's places: what follows waits, and leaves as one call of the batch script.
    const ahead = Array.from({ length: MAX_IN_FLIGHT }, () =>
      batched.consume({ prefix: 'order-other', key: 'x', policy: sku, cost: 0 }),
    );
    const asked = [
      batched.consume({ prefix: 'order-sku', key: 'k', policy: sku, cost: 3, nowMs: FAKE_EPOCH }),
      batched.consumeAll([part('order-ip', ip, 1), part('order-sku', sku, 2)]),
      batched.consumeAll([part('order-ip', ip, 1), part('order-sku', sku, 1)]),
      batched.consume({ prefix: 'order-ip', key: 'k', policy: ip, cost: 1, nowMs: FAKE_EPOCH }),
    ] as const;
    await Promise.all(ahead);
    const [single, both, refused, after] = await Promise.all(asked);
    expect((await scriptCalls(client)) - before).toBe(MAX_IN_FLIGHT + 1);
    expect(single).toMatchObject({ allowed: true, remaining: 2 });
    expect(both.verdicts.map(([v]) => v?.remaining)).toEqual([99, 0]);
    expect(both.receipts.every((r) => r !== undefined)).toBe(true);
    // The SKU is spent: refused, and the address's unit is not taken (all or none).
    expect(refused.verdicts.map(([v]) => v?.allowed)).toEqual([true, false]);
    expect(refused.receipts).toEqual([undefined, undefined]);
    expect(after).toMatchObject({ allowed: true, remaining: 98 });
  });

  test("one joint request's error is its own: its writes fail on OOM, a peek in the same call answers", async () => {
    const batched = new RedisStore({ client });
    const [perIp] = ipAndSku(batched, 'oom');
    const policy = resolvePolicy({ rate: '5/1h' });
    await perIp.peek('warm');
    try {
      await client.config('SET', 'maxmemory', '1');
      const ahead = Array.from({ length: MAX_IN_FLIGHT }, () =>
        batched.consume({ prefix: 'oom-other', key: 'x', policy, cost: 0 }),
      );
      const joint = batched.consumeAll([
        { prefix: 'oom-ip', key: 'ip', policies: [policy], cost: 1 },
        { prefix: 'oom-sku', key: 'sku', policies: [policy], cost: 1 },
      ]);
      const peek = batched.consume({ prefix: 'oom-ip', key: 'ip', policy, cost: 0 });
      const settled = await Promise.allSettled([...ahead, joint, peek]);
      expect(settled[MAX_IN_FLIGHT]).toMatchObject({
        status: 'rejected',
        reason: expect.objectContaining({ message: expect.stringMatching(/^OOM/) }),
      });
      expect(settled[MAX_IN_FLIGHT + 1]).toMatchObject({ status: 'fulfilled', value: { remaining: 5 } });
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
  });
});

describe('every joint call inside a batch (inBatches): as alone', () => {
  test('dry-run limits count with the others but never refuse; exact give-backs with receipts', async () => {
    const on = inBatches(new RedisStore({ client }));
    const clock = fakeClock();
    const enforcing = createLimiter({
      rate: '5/1h',
      store: on,
      prefix: 'ib-enforcing',
      clock,
      timeoutMs: 10_000,
    });
    const dry = createLimiter({ rate: '2/1h', store: on, prefix: 'ib-dry', clock, timeoutMs: 10_000 });
    const decisions: Array<Array<Decision | undefined>> = [];
    for (let i = 0; i < 7; i++) {
      decisions.push(
        await consumeAll([
          { limiter: dry, key: 'k', dryRun: true },
          { limiter: enforcing, key: 'k' },
        ]),
      );
    }
    expect(decisions.map(([, e]) => e?.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(decisions.map(([d]) => d?.allowed)).toEqual([true, true, false, false, false, false, false]);
    expect((await enforcing.peek('k')).remaining).toBe(0);
    expect((await dry.peek('k')).remaining).toBe(0);
  });

  test.each(['fixed-window', 'sliding-window', 'sliding-log', 'gcra'] as const)(
    '%s: giveBackTaken returns exactly what the joint decision took',
    async (algorithm) => {
      const redisStore = new RedisStore({ client });
      const on = inBatches(redisStore);
      const policy = resolvePolicy({ algorithm, rate: '5/1h' });
      const prefix = `ib-back-${algorithm}`;
      const part = { prefix, key: 'k', policies: [policy], cost: 2, nowMs: FAKE_EPOCH };
      const { verdicts, receipts } = await on.consumeAll([part]);
      expect(verdicts[0]?.[0]).toMatchObject({ allowed: true, remaining: 3 });
      await on.giveBackTaken(part, receipts[0] ?? []);
      const peek = await redisStore.consume({ prefix, key: 'k', policy, cost: 0, nowMs: FAKE_EPOCH });
      expect(peek.remaining).toBe(5);
    },
  );
});
