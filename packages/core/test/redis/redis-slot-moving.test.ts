import type Redis from 'ioredis';
import { createLimiter, RedisStore, type RedisStoreClient } from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

/**
 * A Cluster slot moving between masters (resharding) answers `TRYAGAIN` to a call of several
 * keys of the slot: a batch call of several requests. Such a call never ran, so its requests are
 * sent again one per call (one key each, which the client's redirection takes where it is now),
 * and the master's circuit is not the slot's to open. The client here is a real Redis that says
 * it is a Cluster and answers `TRYAGAIN` to the batch script while the test says the slot moves:
 * a migration cannot be held at a given moment on a real one (see the README's failure modes).
 */
const redis = useRedisServer();
let real: Redis;

beforeAll(() => {
  real = redis.client();
});

/** An ioredis-like Cluster client over `real` whose batch script fails with TRYAGAIN while `moving`. */
function movingClient() {
  const state = { moving: true, refused: 0 };
  const methods: Record<string, (...args: string[]) => Promise<unknown>> = {};
  const client = {
    isCluster: true,
    slots: [] as string[][],
    defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }) {
      real.defineCommand(name, definition);
      const run = (real as unknown as Record<string, (...args: string[]) => Promise<unknown>>)[name]?.bind(
        real,
      );
      methods[name] = (...args) => {
        if (state.moving && name.startsWith('sluice:batch:')) {
          state.refused++;
          return Promise.reject(new Error('TRYAGAIN Multiple keys request during rehashing of slot'));
        }
        return (run as (...a: string[]) => Promise<unknown>)(...args);
      };
      Object.assign(client, { [name]: methods[name] });
    },
    del: (...keys: string[]) => real.del(...keys),
  };
  return { client: client as unknown as RedisStoreClient, state };
}

test('a batch refused with TRYAGAIN is sent again one request per call: decided by Redis, exactly', async () => {
  const { client, state } = movingClient();
  const limiter = createLimiter({
    rate: '10/1m',
    store: new RedisStore({ client }),
    prefix: `moving-${Date.now()}`,
    clock: fakeClock(),
    timeoutMs: 5000,
    onStoreError: 'fail-closed',
  });
  const errors: string[] = [];
  limiter.on('storeError', ({ scope }) => errors.push(scope));
  const decisions = await Promise.all(Array.from({ length: 30 }, () => limiter.consume('hot')));
  expect(state.refused).toBeGreaterThan(0); // some went as batches, refused
  expect(decisions.filter((d) => d.degraded !== undefined)).toHaveLength(0);
  expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
  expect(errors).toEqual([]);
});
