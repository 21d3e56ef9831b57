import type Redis from 'ioredis';
import { consumeAll, createLimiter, MemoryStore, RedisStore, type Decision } from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { freePort } from '../harness/free-port';
import { useRedisServer } from '../harness/redis-fixtures';

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
