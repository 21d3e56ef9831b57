import type Redis from 'ioredis';
import { RedisStore } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { commandCalls } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';

/**
 * Every operation of a RedisStore goes through its batch (DESIGN, "Batching"): asked while the
 * slot's calls are on their way, each waits and leaves in the next call of the batch script, in
 * the order asked, whatever it is: a decision on one rule or several, a peek, a give-back of a
 * delayed turn, an exact give-back with receipts, a reset, several limiters' joint decision, the
 * permits' acquire, renewal and release. None is sent on its own.
 */
const redis = useRedisServer();
let client: Redis;
let admin: Redis;

beforeAll(() => {
  client = redis.client();
  admin = redis.client();
});

test('asked while the slot is busy, every kind of operation leaves in one call of the batch script', async () => {
  const store = new RedisStore({ client });
  const prefix = 'every-op';
  const queued = resolvePolicy({ algorithm: 'gcra', rate: '1r/s', queue: { maxWaitMs: 60_000 } });
  const window = resolvePolicy({ algorithm: 'fixed-window', rate: '10/1h' });
  const nowMs = FAKE_EPOCH;
  const part = { prefix, key: 'joint', policies: [window], cost: 1, nowMs };
  const { receipts } = await store.consumeAll([part]);
  const permits = store.permits();
  const permit = { prefix, key: 'p', max: 5, leaseMs: 60_000 };
  await permits.acquire({ ...permit, id: 'held' });
  await admin.config('RESETSTAT');
  const sent = jest.spyOn(client, 'sendCommand');

  // Peeks that take the slot's places: what is asked next waits for one of them.
  const ahead = Array.from({ length: MAX_IN_FLIGHT }, (_, i) =>
    store.consume({ prefix, key: `ahead-${i}`, policy: window, cost: 0, nowMs }),
  );
  const asked: Array<Promise<unknown>> = [
    store.consume({ prefix, key: 'one', policy: queued, cost: 1, nowMs }),
    store.consume({ prefix, key: 'one', policy: queued, cost: 0, nowMs }),
    store.consumeRules({ prefix, key: 'rules', policies: [window, queued], cost: 1, nowMs }),
    store.giveBack({ prefix, key: 'one', policy: queued, cost: 1, nowMs }),
    store.giveBackRules({ prefix, key: 'rules', policies: [window, queued], cost: 1, nowMs }),
    store.reset({ prefix, key: 'gone', policy: window }),
    store.resetRules({ prefix, key: 'gone', policies: [window, queued] }),
    store.consumeAll([part, { ...part, key: 'joint-2' }]),
    store.giveBackTaken(part, receipts[0] ?? []),
    permits.acquire({ ...permit, id: 'new' }),
    permits.renew({ ...permit, ids: ['held'] }),
    permits.release({ ...permit, id: 'held' }),
  ];
  await Promise.all([...ahead, ...asked]);
  // The peeks' own calls, and one for everything asked behind them; nothing sent on its own (a
  // reset's DEL, for one, runs inside the script).
  // (EVAL for a script not loaded yet: ioredis sends it with its text then.)
  expect(sent.mock.calls.map(([command]) => command.name.replace(/^evalsha$/, 'eval'))).toEqual(
    Array.from({ length: MAX_IN_FLIGHT + 1 }, () => 'eval'),
  );
  const calls = await commandCalls(admin);
  expect((calls.evalsha ?? 0) + (calls.eval ?? 0)).toBe(MAX_IN_FLIGHT + 1);
  sent.mockRestore();
});
