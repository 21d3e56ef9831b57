import type Redis from 'ioredis';
import { RedisStore, type Policy, type Store } from '../../src';
import { batchPolicyArgs } from '../../src/stores/redis/batch-call';
import { BATCH_SCRIPT, givesBack, stateKindOf } from '../../src/stores/redis/scripts';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { batchAnswers } from './batch-answers';
import { expectSameKeys, storedKeys, type StoredKey } from './stored-keys';
import { commandCalls as commandCallsOf, scriptCalls } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';
import { STRING_STATE_POLICIES } from './string-state-policies';

/**
 * Issue 11 (Redis at flash-sale scale): a batch whose keys repeat reads each key once and writes
 * it once (see `scripts/batch-view.lua.ts`). Whatever the batch holds — many requests on one hot key,
 * give-backs and resets among them, a key of another type, a request that fails midway — every
 * answer and the state left behind (value and TTL) must be those of the same requests decided
 * one by one.
 */
const redis = useRedisServer();
let client: Redis;

beforeAll(() => {
  client = redis.client();
});

const POLICIES = STRING_STATE_POLICIES;

const COSTS = [1, 1, 0, 2, 1, 3, 1, 1, 0, 1];
const STEPS_MS = [0, 0, 60, 2220, 0, 9000, 0, 24_000, 120, 0];

/** 60 requests on one key: consumes, some give-backs (kinds that delay) and one reset. */
function hotRequests(policy: Policy, prefix: string): ((store: Store) => Promise<unknown>)[] {
  const asked: ((store: Store) => Promise<unknown>)[] = [];
  let nowMs = FAKE_EPOCH;
  for (let i = 0; i < 60; i++) {
    nowMs += STEPS_MS[i % STEPS_MS.length] as number;
    const at = nowMs;
    const cost = COSTS[i % COSTS.length] as number;
    const request = { prefix, key: 'sku:hot', policy, cost, nowMs: at };
    if (i === 41) asked.push((store) => store.reset(request));
    else if (i % 9 === 8 && givesBack(policy))
      asked.push((store) => (store.giveBack as NonNullable<Store['giveBack']>)({ ...request, cost: 1 }));
    else asked.push((store) => store.consume(request));
  }
  return asked;
}

/** What a prefix's keys hold (see stored-keys.ts). */
const stored = (prefix: string): Promise<Record<string, StoredKey>> => storedKeys(client, prefix);

/** Commands scripts ran, by name, since the last RESETSTAT. */
async function commandCalls(name: string): Promise<number> {
  return (await commandCallsOf(client))[name] ?? 0;
}

/** States written since the last RESETSTAT (`PSETEX`, or `SET … PX`). */
async function stateWrites(): Promise<number> {
  return (await commandCalls('psetex')) + (await commandCalls('set'));
}

test.each(POLICIES.map((policy, i) => [`${i} ${stateKindOf(policy)}`, policy] as const))(
  'policy %s: 60 requests on one hot key asked at once decide and store as one by one, with one GET and one SET per call',
  async (_, policy) => {
    const name = `hot-${POLICIES.indexOf(policy)}`;
    const alone = new RedisStore({ client, batch: false });
    const answersAlone: unknown[] = [];
    for (const ask of hotRequests(policy, `${name}-alone`)) answersAlone.push(await ask(alone));

    await client.config('RESETSTAT');
    const store = new RedisStore({ client });
    const answers = await Promise.all(hotRequests(policy, `${name}-batch`).map((ask) => ask(store)));
    const calls = await scriptCalls(client);
    const reads = await commandCalls('get');
    const writes = (await stateWrites()) + (await commandCalls('del'));
    expect(answers).toEqual(answersAlone);
    expectSameKeys(await stored(`${name}-batch`), await stored(`${name}-alone`));
    // Batched (the first request alone, the rest together), each call reading and writing the
    // hot key once, not once per request.
    expect(calls).toBeLessThanOrEqual(3);
    expect(reads).toBeLessThanOrEqual(calls);
    expect(writes).toBeLessThanOrEqual(calls);
  },
);

test('two limiters taking turns, one on a hot key: decided and stored as one by one, the hot key written once per call', async () => {
  const [hot, other] = [POLICIES[0] as Policy, POLICIES[5] as Policy];
  const requests = (prefix: string) =>
    Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? { prefix: `${prefix}-sku`, key: 'sku:hot', policy: hot, cost: 1, nowMs: FAKE_EPOCH + i }
        : { prefix: `${prefix}-ip`, key: `ip:${i}`, policy: other, cost: 1, nowMs: FAKE_EPOCH + i },
    );
  const alone = new RedisStore({ client, batch: false });
  const answersAlone = [];
  for (const request of requests('turns-alone')) answersAlone.push(await alone.consume(request));
  await client.config('RESETSTAT');
  const store = new RedisStore({ client });
  const answers = await Promise.all(requests('turns-batch').map((request) => store.consume(request)));
  const calls = await scriptCalls(client);
  const writes = await stateWrites();
  expect(answers).toEqual(answersAlone);
  expectSameKeys(await stored('turns-batch-sku'), await stored('turns-alone-sku'));
  expectSameKeys(await stored('turns-batch-ip'), await stored('turns-alone-ip'));
  // 20 keys of their own and the hot key once per call, not 40 writes.
  expect(writes).toBeLessThanOrEqual(20 + calls);
});

describe('a key of another type in a batch', () => {
  const policy = POLICIES[0] as Policy;
  const key = (prefix: string) => `${prefix}:{sku:hot}:gcra@2`;

  test('is read as none, once, and left holding what one by one leaves', async () => {
    const alone = new RedisStore({ client, batch: false });
    await client.rpush(key('wrong-alone'), 'a', 'b');
    const request = (prefix: string, i: number) => ({
      prefix,
      key: 'sku:hot',
      policy,
      cost: 1,
      nowMs: FAKE_EPOCH + i,
    });
    const answersAlone = [];
    for (let i = 0; i < 8; i++) answersAlone.push(await alone.consume(request('wrong-alone', i)));

    await client.rpush(key('wrong-batch'), 'a', 'b');
    const store = new RedisStore({ client });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.consume(request('wrong-batch', i))),
    );
    expect(answers).toEqual(answersAlone);
    expect(await client.type(key('wrong-batch'))).toBe('string');
    expectSameKeys(await stored('wrong-batch'), await stored('wrong-alone'));
  });

  test('is deleted by a batch of peeks, as by one peek alone', async () => {
    await client.rpush(key('wrong-peek'), 'a', 'b');
    const store = new RedisStore({ client });
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        store.consume({ prefix: 'wrong-peek', key: 'sku:hot', policy, cost: 0, nowMs: FAKE_EPOCH }),
      ),
    );
    expect(answers.map((verdict) => verdict.allowed)).toEqual(Array.from({ length: 8 }, () => true));
    expect(await client.type(key('wrong-peek'))).toBe('none');
  });
});

describe('a request that fails midway in a batch', () => {
  const gcra = POLICIES[0] as Policy;
  const window = POLICIES[5] as Policy;

  /** The batch script's policy table: each policy's kind (99 for none: its step fails) and numbers. */
  function table(kinds: readonly (Policy | 'broken')[]): string[] {
    const args = [String(kinds.length)];
    for (const policy of kinds) {
      if (policy === 'broken') args.push('99', ...batchPolicyArgs(gcra).slice(1));
      else args.push(...batchPolicyArgs(policy));
    }
    return args;
  }

  /**
   * Requests as runs of the batch script: 3 consumes of the hot gcra key; one request on the hot
   * key, the window key and a key whose policy has no step (it fails after reading two keys);
   * a consume of the window key; 3 more consumes of the hot key.
   */
  function runs(prefix: string): { keys: string[]; runs: string[][] } {
    const hot = `${prefix}:{h}:gcra@2`;
    const other = `${prefix}:{h}:fixed-window`;
    const none = `${prefix}:{h}:none`;
    const now = String(FAKE_EPOCH);
    return {
      keys: [hot, hot, hot, hot, other, none, other, hot, hot, hot],
      runs: [
        ['3', '1', '1', '1', now, '1'],
        ['1', '1', '3', '1', now, '1', '2', '3'],
        ['1', '1', '1', '1', now, '2'],
        ['3', '1', '1', '1', now, '1'],
      ],
    };
  }

  test('fails alone, and the others decide and store as one by one', async () => {
    const policies = table([gcra, window, 'broken']);
    // One by one: each request its own call of the batch script (no key repeats in it).
    const alone = runs('fail-alone');
    const answersAlone: unknown[] = [];
    let k = 0;
    for (const run of alone.runs) {
      const [count, op, n] = run.map(Number) as [number, number, number];
      for (let i = 0; i < count; i++) {
        const keys = alone.keys.slice(k, k + n);
        k += n;
        const reply = (await client
          .eval(BATCH_SCRIPT, keys.length, ...keys, ...policies, '1', String(op), ...run.slice(2))
          .catch((error: unknown) => [error])) as unknown[];
        answersAlone.push(...reply);
      }
    }
    const batch = runs('fail-batch');
    const reply = (await client.eval(
      BATCH_SCRIPT,
      batch.keys.length,
      ...batch.keys,
      ...policies,
      ...batch.runs.flat(),
    )) as unknown[];

    expect(reply.map(String)).toEqual(answersAlone.map(String));
    // The failure is the request's own: one error where its three verdicts would be.
    expect(reply.filter((value) => value instanceof Error)).toHaveLength(1);
    const consumes = Array.from({ length: 3 + 1 + 1 + 3 }, () => 1);
    expect(batchAnswers(reply, consumes)).toHaveLength(consumes.length);
    expectSameKeys(await stored('fail-batch'), await stored('fail-alone'));
  });
});

describe('under maxmemory', () => {
  const gcra = POLICIES[0] as Policy;

  /** One call of the batch script: consumes (op 1) and resets (op 3) of one key, in order. */
  async function batch(key: string, ops: readonly number[]): Promise<unknown[]> {
    const policy = batchPolicyArgs(gcra);
    const runs = ops.flatMap((op) => ['1', String(op), '1', '1', String(FAKE_EPOCH), '1']);
    return (await client.eval(
      BATCH_SCRIPT,
      ops.length,
      ...ops.map(() => key),
      '1',
      ...policy,
      ...runs,
    )) as unknown[];
  }

  /** Redis refuses a script's writes that may add memory until one of its writes is not refused. */
  test.each([
    ['consumes before a reset: each consume meets the refusal', [1, 1, 3], ['OOM', 'OOM', 0]],
    ['a reset first: the consumes after it are taken', [3, 1, 1], [0, 'admitted', 'admitted']],
  ] as const)('%s', async (_, ops, expected) => {
    const key = `oom-view:{k}:${ops.join('')}`;
    try {
      await client.config('SET', 'maxmemory', '1');
      expect(batchAnswers(await batch(key, ops), ops)).toEqual(expected);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
  });
});

test('a hot key with a joint decision among its requests: decided and stored as one by one (through the view: see redis-batch-joint.test.ts)', async () => {
  const [hot, ip] = [POLICIES[0] as Policy, POLICIES[5] as Policy];
  const requests = (prefix: string): ((store: RedisStore) => Promise<unknown>)[] =>
    Array.from({ length: 30 }, (_, i) => {
      const nowMs = FAKE_EPOCH + i * 20;
      const sku = { prefix: `${prefix}-sku`, key: 'sku:hot', cost: 1, nowMs };
      if (i % 10 === 5)
        return (store) =>
          store.consumeAll([
            { ...sku, policies: [hot] },
            { prefix: `${prefix}-ip`, key: 'ip:1', policies: [ip], cost: 1, nowMs },
          ]);
      return (store) => store.consume({ ...sku, policy: hot });
    });
  const alone = new RedisStore({ client, batch: false });
  const answersAlone: unknown[] = [];
  for (const ask of requests('joint-alone')) answersAlone.push(await ask(alone));
  const store = new RedisStore({ client });
  const answers = await Promise.all(requests('joint-batch').map((ask) => ask(store)));
  expect(answers).toEqual(answersAlone);
  expectSameKeys(await stored('joint-batch'), await stored('joint-alone'));
});
