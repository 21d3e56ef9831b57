import type Redis from 'ioredis';
import {
  createLimiter,
  RedisStore,
  StoreTimeoutError,
  type LimiterEvents,
  type Store,
  type StoreRequest,
  type Verdict,
} from '../../src';
import { capacityOf, storeErrorScope } from '../../src/adapter';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { startRedisServer, type RedisProcess } from '../harness/redis-server';

/**
 * Issue #16 item 9, second half: an error about one key's data is that key's trouble, never the
 * store being down. Each request on it is decided by `onStoreError`, but it never counts toward
 * opening the circuit, so every other key keeps being decided by Redis. The errors classified
 * are real ones, sent by a real redis-server (7) in each situation.
 */
const redis = useRedisServer();
const extra: RedisProcess[] = [];
afterAll(async () => {
  await Promise.all(extra.map((server) => server.stop()));
});

/** The error a promise rejects with (fails the test if it resolves). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** Counts hits with no check of what the key holds, so the key's data can still fail it. */
const NAIVE_LUA = `local n = (redis.call('GET', KEYS[1]) or 0) + 1
redis.call('SET', KEYS[1], n, 'PX', 60000)
return n`;

/** A remote store of another make, whose script a key's data can fail (sluice's cannot: see redis-corrupt-state). */
class NaiveScriptStore implements Store {
  constructor(readonly client: Redis) {}

  async consume({ key, policy }: StoreRequest): Promise<Verdict> {
    const hits = Number(await this.client.eval(NAIVE_LUA, 1, `naive:{${key}}`));
    const limit = capacityOf(policy);
    const common = { limit, remaining: Math.max(0, limit - hits), resetMs: 0, retryAfterMs: 0, delayMs: 0 };
    return hits <= limit ? { allowed: true, ...common } : { allowed: false, ...common, reason: 'limited' };
  }

  async reset({ key }: Omit<StoreRequest, 'cost'>): Promise<void> {
    await this.client.del(`naive:{${key}}`);
  }
}

describe('storeErrorScope, on the errors redis-server really sends', () => {
  test("a key's data, or a script run on it: 'key'", async () => {
    const client = redis.client();
    await client.rpush('{list}', 'a');
    await client.set('{text}', 'garbage');
    const errors = [
      await failure(client.get('{list}')), // WRONGTYPE …
      await failure(client.eval("return redis.call('GET', KEYS[1])", 1, '{list}')), // WRONGTYPE … script: …
      await failure(client.eval("return redis.call('GET', KEYS[1]) + 1", 1, '{text}')), // ERR user_script:1: attempt to perform arithmetic …
      await failure(client.eval("return redis.call('INCR', KEYS[1])", 1, '{text}')), // ERR value is not an integer … script: …
    ];
    expect(errors.map(storeErrorScope)).toEqual(['key', 'key', 'key', 'key']);
  });

  test("the server out of memory, a replica (master down, or read-only), a cluster without the slot, a refused connection, a timeout: 'store'", async () => {
    const client = redis.client();
    await client.config('SET', 'maxmemory', '1');
    const oom = await Promise.all([
      failure(client.set('{a}', '1')),
      failure(client.eval("return redis.call('SET', KEYS[1], 1)", 1, '{a}')),
    ]).finally(() => client.config('SET', 'maxmemory', '0'));

    const dead = await startRedisServer();
    const deadPort = dead.port;
    await dead.stop();
    const replicaOf = ['--replicaof', '127.0.0.1', String(deadPort)];
    const stale = await startRedisServer({ args: [...replicaOf, '--replica-serve-stale-data', 'no'] });
    const replica = await startRedisServer({ args: replicaOf });
    const node = await startRedisServer({ args: ['--cluster-enabled', 'yes'], busOffset: 10_000 });
    extra.push(stale, replica, node);
    const refused = redis.client({ port: deadPort, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const errors = [
      ...oom,
      await failure(redis.client({ port: stale.port }).get('{a}')),
      await failure(
        redis.client({ port: replica.port }).eval("return redis.call('SET', KEYS[1], 1)", 1, '{a}'),
      ),
      await failure(redis.client({ port: node.port }).eval('return 1', 1, '{a}')),
      await failure(refused.get('{a}')),
      new StoreTimeoutError(50),
    ];
    expect(errors.map((e) => (e as Error).message.split(' ')[0])).toEqual([
      'OOM',
      'OOM',
      'MASTERDOWN',
      'READONLY',
      'CLUSTERDOWN',
      expect.any(String),
      'the',
    ]);
    expect(errors.map(storeErrorScope)).toEqual(errors.map(() => 'store'));
  });

  test.each([
    // Redis 6 and earlier wrap what a script raised (their form, as scripting.c of Redis 6 writes it;
    // no Redis 6 runs here), and texts this Redis sends only in states a test cannot cheaply reach.
    [
      'ERR Error running script (call to f_3b1a): @user_script:5: WRONGTYPE Operation against a key holding the wrong kind of value',
      'key',
    ],
    [
      "ERR Error running script (call to f_3b1a): @user_script:7: user_script:7: attempt to perform arithmetic on local 'debt' (a nil value)",
      'key',
    ],
    [
      "ERR Error running script (call to f_3b1a): @user_script:9: @user_script: 9: -OOM command not allowed when used memory > 'maxmemory'.",
      'store',
    ],
    [
      "ERR Error running script (call to f_3b1a): @user_script:2: @user_script: 2: -READONLY You can't write against a read only replica.",
      'store',
    ],
    ['LOADING Redis is loading the dataset in memory', 'store'],
    ['BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.', 'store'],
    ['Connection is closed.', 'store'],
    // A Cluster slot moving between masters: that slot's requests, not the master's, are unlucky.
    ['TRYAGAIN Multiple keys request during rehashing of slot', 'slot'],
    ['MOVED 3999 127.0.0.1:6381', 'slot'],
    ['ASK 3999 127.0.0.1:6381', 'slot'],
    ['Too many Cluster redirections. Last error: ReplyError: TRYAGAIN Multiple keys request', 'slot'],
    ['Too many Cluster redirections. Last error: ReplyError: MOVED 3999 127.0.0.1:6381', 'slot'],
    ['Cannot find node 127.0.0.1:27104', 'slot'],
    // …but a cluster that cannot serve at all is the store's trouble.
    ['Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down', 'store'],
    ['CLUSTERDOWN The cluster is down', 'store'],
    ['sluice: unexpected reply from the Redis rate-limit script: "PONG"', 'store'],
  ])('%s → %s', (message, scope) => {
    expect(storeErrorScope(new Error(message))).toBe(scope);
  });
});

describe('a key whose data fails the store call never opens the circuit for the others', () => {
  const run = async (
    store: Store,
    badKeyOf: (key: string) => string,
    corrupt: (client: Redis, key: string) => Promise<unknown>,
  ) => {
    const client = redis.client();
    // The circuit's clock stands still: once open, it would stay open for the whole test.
    const limiter = createLimiter({ rate: '1000/1m', store, clock: fakeClock(), onStoreError: 'fail-open' });
    const errors: LimiterEvents['storeError'][] = [];
    limiter.on('storeError', (event) => errors.push(event));
    await corrupt(client, badKeyOf('bad'));
    const bad = [];
    const good = [];
    for (let i = 0; i < 10; i++) {
      bad.push(await limiter.consume('bad'));
      good.push(await limiter.consume(`good-${i % 3}`));
    }
    expect(good.map((d) => d.degraded)).toEqual(good.map(() => undefined));
    return { bad, errors };
  };

  test('a store whose script fails on a key (a list, a garbage string): that key fails open 10×, every other key is decided by Redis', async () => {
    const store = new NaiveScriptStore(redis.client());
    for (const corrupt of [
      (client: Redis, key: string) => client.rpush(key, 'a'),
      (client: Redis, key: string) => client.set(key, 'garbage'),
    ]) {
      await store.reset({ prefix: '', key: 'bad', policy: undefined as never });
      const { bad, errors } = await run(store, (key) => `naive:{${key}}`, corrupt);
      expect(bad.map((d) => d.degraded)).toEqual(bad.map(() => 'fail-open'));
      expect(errors.map(({ key, scope }) => [key, scope])).toEqual(bad.map(() => ['bad', 'key']));
    }
  });

  test('RedisStore: a list at the key is read as no state: no error at all, 10× on that key and none elsewhere', async () => {
    const store = new RedisStore({ client: redis.client() });
    const { bad, errors } = await run(
      store,
      (key) => `sluice:{${key}}:gcra@2`,
      (client, key) => client.rpush(key, 'a'),
    );
    expect(bad.map((d) => [d.allowed, d.degraded])).toEqual(bad.map(() => [true, undefined]));
    expect(errors).toEqual([]);
  });

  test('the store itself failing (out of memory) still opens the circuit after 3 failures', async () => {
    const client = redis.client();
    const limiter = createLimiter({
      rate: '1000/1m',
      store: new RedisStore({ client }),
      clock: fakeClock(),
      onStoreError: 'fail-open',
    });
    const errors: LimiterEvents['storeError'][] = [];
    limiter.on('storeError', (event) => errors.push(event));
    await client.config('SET', 'maxmemory', '1');
    try {
      for (let i = 0; i < 3; i++) expect((await limiter.consume(`k${i}`)).degraded).toBe('fail-open');
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    expect(errors.map((e) => e.scope)).toEqual(['store', 'store', 'store']);
    // Redis is fine again, but the circuit is open: no call until the cooldown (on the clock) passes.
    expect((await limiter.consume('k3')).degraded).toBe('fail-open');
    expect(errors).toHaveLength(3);
  });
});
