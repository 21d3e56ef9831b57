import type Redis from 'ioredis';
import { RedisStore, type Policy, type Store } from '../../src';
import { MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';
import { batchPolicyArgs } from '../../src/stores/redis/batch-call';
import { BATCH_SCRIPT, givesBack } from '../../src/stores/redis/scripts';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { batchAnswers } from './batch-answers';
import { packState } from './packed-state';
import { expectSameKeys, storedKeys, type StoredKey } from './stored-keys';
import { commandCalls as commandCallsOf } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';
import { STRING_STATE_POLICIES } from './string-state-policies';

/**
 * Issue 11: a batch whose keys do not repeat reads them all in one MGET up front (see
 * `scripts/batch-view.lua.ts`) instead of one GET per request. Whatever the keys hold — state, none,
 * a key of another type — every answer and the state left behind (value and TTL) must be those
 * of the same requests decided one by one, and a write Redis refuses must fail the requests it
 * failed one by one.
 */
const redis = useRedisServer();
let client: Redis;

beforeAll(() => {
  client = redis.client();
});

const POLICIES = STRING_STATE_POLICIES;
const COSTS = [1, 1, 0, 2, 1, 30, 1, 3];

type Ask = (store: Store) => Promise<unknown>;

/**
 * One request on each of 56 keys (8 per policy, every key once): consumes of several costs
 * (peeks, and a cost past every capacity), a give-back on kinds that delay, a reset.
 */
function distinctRequests(prefix: string, nowMs: number): Ask[] {
  return Array.from({ length: 56 }, (_, i): Ask => {
    const policy = POLICIES[i % POLICIES.length] as Policy;
    const request = { prefix, key: `user:${i}`, policy, cost: COSTS[i % COSTS.length] as number, nowMs };
    if (i % 11 === 10) return (store) => store.reset(request);
    if (i % 13 === 12 && givesBack(policy))
      return (store) => (store.giveBack as NonNullable<Store['giveBack']>)({ ...request, cost: 1 });
    return (store) => store.consume(request);
  });
}

/** What a prefix's keys hold (see stored-keys.ts). */
const stored = (prefix: string): Promise<Record<string, StoredKey>> => storedKeys(client, prefix);

/** Commands run, by name, since the last RESETSTAT. */
async function commandCalls(name: string): Promise<number> {
  return (await commandCallsOf(client))[name] ?? 0;
}

/**
 * The requests one by one on `alone-<name>`, then asked at once on `batch-<name>`: both answers,
 * and the GET and MGET commands Redis ran for the batched ones.
 */
async function bothWays(
  name: string,
  asked: (prefix: string) => Ask[],
  prepare: (prefix: string) => Promise<void> = async () => {},
): Promise<{ answers: unknown[]; answersAlone: unknown[]; gets: number; mgets: number }> {
  const alone = new RedisStore({ client, batch: false });
  const answersAlone: unknown[] = [];
  await prepare(`alone-${name}`);
  for (const ask of asked(`alone-${name}`)) answersAlone.push(await ask(alone));
  await prepare(`batch-${name}`);
  await client.config('RESETSTAT');
  const store = new RedisStore({ client });
  const answers = await Promise.all(asked(`batch-${name}`).map((ask) => ask(store)));
  return { answers, answersAlone, gets: await commandCalls('get'), mgets: await commandCalls('mget') };
}

test('56 distinct keys of every string kind, half holding state, asked at once: read in one MGET, decided and stored as one by one', async () => {
  // Half the keys hold state first, written one by one.
  const before = new RedisStore({ client, batch: false });
  const { answers, answersAlone, gets, mgets } = await bothWays(
    'distinct',
    (prefix) => distinctRequests(prefix, FAKE_EPOCH + 1500),
    async (prefix) => {
      for (const [i, ask] of distinctRequests(prefix, FAKE_EPOCH).entries())
        if (i % 2 === 0) await ask(before);
    },
  );
  expect(answers).toEqual(answersAlone);
  expectSameKeys(await stored('batch-distinct'), await stored('alone-distinct'));
  // A GET only for the requests that went alone (their slot idle), not one per request.
  expect(mgets).toBeGreaterThanOrEqual(1);
  expect(gets).toBeLessThanOrEqual(MAX_IN_FLIGHT);
});

test('distinct keys holding one same state, or one same unreadable text, a run of each string kind: decided and stored as one by one', async () => {
  // A run decides a key whose state is the text it last decided on as that one (see consume_run):
  // the same verdicts, and every unreadable state deleted by its own request.
  // Peeks in runs of their own, two on one unreadable text (a peek leaves no state in its place).
  const PEEKS = [7, 11, 12, 15, 16];
  const asked = (prefix: string, nowMs: number, peeks = PEEKS): Ask[] =>
    POLICIES.flatMap((policy, p) =>
      Array.from(
        { length: 20 },
        (_, i): Ask =>
          (store) =>
            store.consume({
              prefix,
              key: `same:${p}:${i}`,
              policy,
              cost: peeks.includes(i) ? 0 : 1,
              nowMs,
            }),
      ),
    );
  const before = new RedisStore({ client, batch: false });
  const { answers, answersAlone } = await bothWays(
    'same',
    (prefix) => asked(prefix, FAKE_EPOCH + 1500),
    async (prefix) => {
      // Every key's state written at one time: one text per policy, then some keys' replaced.
      for (const ask of asked(prefix, FAKE_EPOCH, [])) await ask(before);
      for (const key of await client.keys(`${prefix}:*same:*`)) {
        const i = Number(/same:\d+:(\d+)/.exec(key)?.[1]);
        if (i >= 10 && i < 14) await client.set(key, 'not a state', 'PX', 60_000);
        if (i >= 14 && i < 17) await client.set(key, packState([FAKE_EPOCH + 9_000_000, 0]), 'PX', 60_000);
        if (i >= 17) await client.del(key);
      }
    },
  );
  expect(answers).toEqual(answersAlone);
  expectSameKeys(await stored('batch-same'), await stored('alone-same'));
});

describe('keys of another type among distinct keys', () => {
  const gcra = POLICIES[0] as Policy;
  const key = (prefix: string, user: string) => `${prefix}:{${user}}:gcra@2`;

  /** Admitted, peeked, past its capacity, reset: each on a list, among keys of none and of state. */
  const asked = (prefix: string): Ask[] => [
    // The first requests go alone (their slot idle): the batch begins after them.
    ...Array.from(
      { length: MAX_IN_FLIGHT },
      (_, i): Ask =>
        (store) =>
          store.consume({ prefix, key: `alone:${i}`, policy: gcra, cost: 1, nowMs: FAKE_EPOCH }),
    ),
    (store) => store.consume({ prefix, key: 'fresh:1', policy: gcra, cost: 1, nowMs: FAKE_EPOCH }),
    (store) => store.consume({ prefix, key: 'list:admitted', policy: gcra, cost: 1, nowMs: FAKE_EPOCH }),
    (store) => store.consume({ prefix, key: 'list:peeked', policy: gcra, cost: 0, nowMs: FAKE_EPOCH }),
    (store) => store.consume({ prefix, key: 'state:1', policy: gcra, cost: 2, nowMs: FAKE_EPOCH + 5 }),
    (store) => store.consume({ prefix, key: 'list:too-big', policy: gcra, cost: 50, nowMs: FAKE_EPOCH }),
    (store) => store.reset({ prefix, key: 'list:reset', policy: gcra }),
    // Enough keys for the batch to read them up front (16 or more).
    ...Array.from(
      { length: 12 },
      (_, i): Ask =>
        (store) =>
          store.consume({ prefix, key: `fresh:${i + 2}`, policy: gcra, cost: 1, nowMs: FAKE_EPOCH }),
    ),
  ];

  test('are read as none, and deleted or replaced as one by one', async () => {
    const lists = ['list:admitted', 'list:peeked', 'list:too-big', 'list:reset'];
    for (const prefix of ['alone-wrong', 'batch-wrong']) {
      await client.set(key(prefix, 'state:1'), packState([FAKE_EPOCH - 100, 0, 0]), 'PX', 60_000);
      for (const user of lists) await client.rpush(key(prefix, user), 'a', 'b');
    }
    const { answers, answersAlone } = await bothWays('wrong', asked);
    expect(answers).toEqual(answersAlone);
    const batched = await stored('batch-wrong');
    expectSameKeys(batched, await stored('alone-wrong'));
    // No list is left: each was read as none, then replaced by its state or deleted.
    expect(Object.values(batched).map(({ type }) => type)).toEqual(
      Object.values(batched).map(() => 'string'),
    );
    expect(await client.exists(key('batch-wrong', 'list:peeked'))).toBe(0);
  });
});

describe('under maxmemory, a batch of distinct keys', () => {
  const gcra = POLICIES[0] as Policy;

  /** One call of the batch script: a consume of each key, in order. */
  async function batch(keys: readonly string[]): Promise<unknown[]> {
    const policy = batchPolicyArgs(gcra);
    return (await client.eval(
      BATCH_SCRIPT,
      keys.length,
      ...keys,
      '1',
      ...policy,
      String(keys.length),
      '1',
      '1',
      '1',
      String(FAKE_EPOCH),
      '1',
    )) as unknown[];
  }

  /**
   * Redis refuses a script's writes that may add memory until one of its writes is not refused.
   * Three keys, then 15 more of none (a batch of 16 keys or more reads them up front).
   */
  test.each([
    ['none and state: each consume meets the refusal', ['none', 'state', 'none'], ['OOM', 'OOM', 'OOM']],
    [
      'a list second: its deletion at its read is taken, and so are the writes after it',
      ['none', 'list', 'none'],
      ['OOM', 'admitted', 'admitted'],
    ],
  ] as const)('%s', async (_, holds, expected) => {
    const keys = [...holds, ...Array.from({ length: 15 }, () => 'none')].map(
      (held, i) => `oom-fetch:{k}:${holds.join('-')}:${i}:${held}`,
    );
    for (const [i, held] of holds.entries()) {
      if (held === 'state')
        await client.set(keys[i] as string, packState([FAKE_EPOCH - 100, 0, 0]), 'PX', 60_000);
      if (held === 'list') await client.rpush(keys[i] as string, 'a');
    }
    const last = expected[2];
    try {
      await client.config('SET', 'maxmemory', '1');
      expect(
        batchAnswers(
          await batch(keys),
          keys.map(() => 1),
        ),
      ).toEqual([...expected, ...Array.from({ length: 15 }, () => last)]);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    // The second key: left as it was when its consume met the refusal, or its list replaced.
    const second = keys[1] as string;
    if (holds[1] === 'state')
      expect(await client.getBuffer(second)).toEqual(packState([FAKE_EPOCH - 100, 0, 0]));
    else expect(await client.type(second)).toBe('string');
  });
});
