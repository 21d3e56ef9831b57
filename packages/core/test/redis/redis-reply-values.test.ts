import type Redis from 'ioredis';
import { createLimiter, RedisStore, type Decision, type LimiterEvents } from '../../src';
import { storeErrorScope, StoreKeyError } from '../../src/resilience/store-errors';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

/**
 * A script's reply of the right shape whose numbers no step gives (a negative reset, say: the
 * script read odd state at one key) is that request's error alone, of scope `'key'`: the other
 * requests of its batch are decided by Redis as usual, and no number of them opens the circuit.
 * (An audit's corrupt sliding log once led the script to such a wait: the whole batch failed as
 * a store error, other keys degraded, the circuit opened.) The client here is a real one whose
 * replies of the batch script and the policy scripts are spoilt at one request each.
 */
const redis = useRedisServer();

/** A real ioredis client; each reply of a script named by `spoil` goes through `spoil` first. */
function spoiling(real: Redis, spoil: (name: string, reply: unknown) => unknown) {
  const client = {
    defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }) {
      real.defineCommand(name, definition);
      const command = (real as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[name];
      (client as unknown as Record<string, unknown>)[name] = (...args: unknown[]) =>
        (command as (...args: unknown[]) => Promise<unknown>)
          .apply(real, args)
          .then((reply) => spoil(name, reply));
    },
    del: (...keys: string[]) => real.del(...keys),
  };
  return client;
}

async function run(batch: boolean) {
  let spoilt = 0;
  const client = spoiling(redis.client(), (name, reply) => {
    if (name.startsWith('sluice:batch:') && Array.isArray(reply) && reply.length >= 4) {
      // The first request's part: an admission without delay, `remaining, resetMs`.
      spoilt++;
      return [reply[0], -5, ...(reply as unknown[]).slice(2)];
    }
    if (name.startsWith('sluice:policy:')) {
      spoilt++;
      return [0, 3, -5, 0];
    }
    return reply;
  });
  const store = new RedisStore({ client, batch });
  const limiter = createLimiter({
    rate: '1000/1m',
    store,
    prefix: `spoilt-${String(batch)}`,
    clock: fakeClock(),
    onStoreError: 'fail-open',
    blockCache: false,
    timeoutMs: 5000,
  });
  const errors: LimiterEvents['storeError'][] = [];
  limiter.on('storeError', (event) => errors.push(event));
  const decisions: Decision[] = [];
  for (let round = 0; round < 5; round++)
    decisions.push(...(await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.consume(`k${i}`)))));
  return { decisions, errors, spoilt };
}

test('batching on: a request whose part holds numbers no step gives fails alone; its batch is decided by Redis', async () => {
  const { decisions, errors, spoilt } = await run(true);
  expect(spoilt).toBeGreaterThan(0);
  const degraded = decisions.filter((d) => d.degraded !== undefined);
  expect(degraded.length).toBe(spoilt);
  expect(errors.length).toBe(spoilt);
  expect(errors.every(({ scope, error }) => scope === 'key' && error instanceof StoreKeyError)).toBe(true);
  // Every other request of the spoilt batches: decided by Redis.
  expect(decisions.length - degraded.length).toBeGreaterThan(spoilt);
});

test('batch: false: such replies fail their requests alone and never open the circuit', async () => {
  const { decisions, errors, spoilt } = await run(false);
  expect(spoilt).toBe(100);
  expect(decisions.every((d) => d.degraded === 'fail-open')).toBe(true);
  expect(errors.every(({ scope }) => scope === 'key')).toBe(true);
  // Each was sent to Redis: with the circuit open, most would have been decided without a call.
  expect(errors.length).toBe(100);
});

test('a reply that is not numbers is not the script answering: of the store', () => {
  expect(storeErrorScope(new StoreKeyError('x'))).toBe('key');
  expect(
    storeErrorScope(new Error('sluice: unexpected reply from the Redis rate-limit script: "PONG"')),
  ).toBe('store');
});
