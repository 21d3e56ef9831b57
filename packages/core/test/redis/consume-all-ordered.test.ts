import type Redis from 'ioredis';
import { consumeAll, createLimiter, MemoryStore, RedisStore, type Limiter } from '../../src';
import { useRedisServer } from '../harness/redis-fixtures';
import { startTcpProxy, type TcpProxy } from '../harness/tcp-proxy';

/**
 * Several limits taken in turn (each on a store of its own: `consumeAll`'s ordered path) wait for
 * their stores one `timeoutMs` in all, not one per limit: a limit whose turn finds the time
 * spent, or whose store does not answer within what is left, is decided by its `onStoreError`,
 * and what its store takes late is given back, so no unit is lost.
 */
const redis = useRedisServer();
let direct: Redis;
let proxy: TcpProxy | undefined;
let sequence = 0;

beforeAll(() => {
  direct = redis.client();
});

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

const TIMEOUT_MS = 200;

/** Three limiters, each on a RedisStore of its own through `client`, each with its insurance. */
function limits(client: Redis): Array<{ limiter: Limiter; store: RedisStore; prefix: string }> {
  return [1, 2, 3].map((n) => {
    const store = new RedisStore({ client });
    const prefix = `ordered-${++sequence}-${n}`;
    const limiter = createLimiter({
      rate: '10/1h',
      store,
      prefix,
      timeoutMs: TIMEOUT_MS,
      onStoreError: { insurance: new MemoryStore() },
      blockCache: false,
    });
    return { limiter, store, prefix };
  });
}

async function throughProxy(): Promise<Redis> {
  proxy = await startTcpProxy(redis.server().port);
  const client = redis.client({ port: proxy.port });
  await client.ping();
  return client;
}

test('a store that does not answer: the request waits one timeoutMs in all, each limit decided by its insurance', async () => {
  const all = limits(await throughProxy());
  const keys = all.map(({ limiter }) => ({ limiter, key: 'k' }));
  expect((await consumeAll(keys)).map((d) => d?.degraded)).toEqual([undefined, undefined, undefined]);
  proxy?.setBlackhole(true);
  const started = performance.now();
  const decisions = await consumeAll(keys);
  const tookMs = performance.now() - started;
  expect(decisions.map((d) => [d?.allowed, d?.degraded])).toEqual(all.map(() => [true, 'insurance']));
  // One timeout and a few turns, where one per limit took three.
  expect(tookMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  expect(tookMs).toBeLessThan(2 * TIMEOUT_MS);
});

test('a slow store: what it takes after its limit was decided without it is given back', async () => {
  const slow = await throughProxy();
  const all = limits(slow);
  // About 150 ms a round trip: the first limit's answer comes in time, the second's is late,
  // the third's turn finds the time spent.
  proxy?.setLatency(75);
  const decisions = await consumeAll(all.map(({ limiter }) => ({ limiter, key: 'k' })));
  expect(decisions.every((d) => d?.allowed)).toBe(true);
  expect(decisions.some((d) => d?.degraded === 'insurance')).toBe(true);
  // Every unit where its decision says: in Redis for a limit Redis decided, nowhere in Redis for
  // one its insurance decided, once the late calls and their give-backs have landed. Replies come
  // in order on the connection: a PING answered after the late call's reply (whose give-back is
  // then sent), then one after the give-back's.
  await slow.ping();
  await new Promise((resolve) => setImmediate(resolve));
  await slow.ping();
  const reader = new RedisStore({ client: direct });
  const held = await Promise.all(
    all.map(async ({ limiter: { policy }, prefix }) => {
      const verdict = await reader.consume({ prefix, key: 'k', policy, cost: 0 });
      return policy.limit - verdict.remaining;
    }),
  );
  expect(held).toEqual(decisions.map((d) => (d?.degraded === undefined ? 1 : 0)));
});
