import type Redis from 'ioredis';
import { RedisStore, type JointPart, type Policy, type Store } from '../../src';
import { MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';
import { givesBack, stateKindOf } from '../../src/stores/redis/scripts';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { expectSameKeys, storedKeys, type StoredKey } from './stored-keys';
import { commandCalls as commandCallsOf, scriptCalls } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';
import { STRING_STATE_POLICIES } from './string-state-policies';

/**
 * Joint decisions (several limits of one request: `consumeAll`) inside a batch, on string states:
 * their keys are read with the batch's (one `MGET` up front, or the view when keys repeat, see
 * `scripts/batch.lua.ts`) instead of a `GET` each. Whatever the batch holds — distinct and
 * repeating keys, admissions and refusals, dry-run and probe parts, parts of several rules, one-key
 * consumes, give-backs and resets among them, a key of another type — every answer and the state
 * left behind (value and TTL) must be those of the same requests decided one by one (each by the
 * joint script alone, which the differential tests hold to the TypeScript reference).
 */
const redis = useRedisServer();
let client: Redis;

beforeAll(() => {
  client = redis.client();
});

const POLICIES = STRING_STATE_POLICIES;
const policy = (i: number): Policy => POLICIES[i % POLICIES.length] as Policy;
const COSTS = [1, 1, 0, 2, 1, 30, 1, 3];
const STEPS_MS = [0, 0, 60, 2220, 0, 9000, 0, 24_000, 120, 0];

type Ask = (store: RedisStore) => Promise<unknown>;

/** What a prefix's keys hold (see stored-keys.ts). */
const stored = (prefix: string): Promise<Record<string, StoredKey>> => storedKeys(client, prefix);

/**
 * The requests one by one on `alone-<name>` (no batching), then on `batch-<name>` asked at once
 * behind `MAX_IN_FLIGHT` peeks of another prefix, so that every one of them is decided inside a
 * call of the batch script; both answers (errors as their messages), and the commands Redis ran
 * for the batched ones.
 */
async function bothWays(
  name: string,
  asked: (prefix: string) => Ask[],
  prepare: (prefix: string, store: RedisStore) => Promise<void> = async () => {},
): Promise<{
  answers: unknown[];
  answersAlone: unknown[];
  calls: Record<string, number>;
  gets: number;
  scripts: number;
}> {
  const settle = (ask: Ask, store: RedisStore): Promise<unknown> =>
    ask(store).catch((error: unknown) => String(error));
  const alone = new RedisStore({ client, batch: false });
  await prepare(`alone-${name}`, alone);
  const answersAlone: unknown[] = [];
  for (const ask of asked(`alone-${name}`)) answersAlone.push(await settle(ask, alone));
  await prepare(`batch-${name}`, alone);
  const store = new RedisStore({ client });
  const peek = policy(0);
  await store.consume({ prefix: 'joint-companion', key: 'x', policy: peek, cost: 0 }); // script loaded
  await client.config('RESETSTAT');
  const ahead = Array.from({ length: MAX_IN_FLIGHT }, () =>
    store.consume({ prefix: 'joint-companion', key: 'x', policy: peek, cost: 0 }),
  );
  const answers = await Promise.all(asked(`batch-${name}`).map((ask) => settle(ask, store)));
  await Promise.all(ahead);
  // Less the peeks ahead: a call and a GET each.
  const scripts = (await scriptCalls(client)) - MAX_IN_FLIGHT;
  const calls = await commandCallsOf(client);
  return { answers, answersAlone, calls, gets: (calls.get ?? 0) - MAX_IN_FLIGHT, scripts };
}

/** A part of one rule (or of two, `rules`), at `nowMs`. */
function part(
  prefix: string,
  key: string,
  policies: readonly Policy[],
  cost: number,
  nowMs: number,
  flags: Pick<JointPart, 'dryRun' | 'probe'> = {},
): JointPart {
  return { prefix: `${prefix}-${key.split(':')[0]}`, key, policies, cost, nowMs, ...flags };
}

/**
 * 48 joint requests [perIp, perSku] on distinct keys (96 keys: read up front), every string
 * kind on each side: admissions, peeks, costs past a capacity (the whole request refused, the
 * other part reporting a peek), dry-run and probe parts, parts of two rules.
 */
function distinctRequests(prefix: string, nowMs: number): Ask[] {
  return Array.from({ length: 48 }, (_, i): Ask => {
    const cost = COSTS[i % COSTS.length] as number;
    const ipRules = i % 8 === 3 ? [policy(i), policy(i + 5)] : [policy(i)];
    const ip = part(prefix, `ip:${i}`, ipRules, cost, nowMs, i % 9 === 4 ? { dryRun: true } : {});
    const sku = part(
      prefix,
      `sku:${i}`,
      [policy(i + 3)],
      i % 5 === 2 ? 1 : cost,
      nowMs,
      i % 10 === 6 ? { probe: true } : {},
    );
    return (store) => store.consumeAll([ip, sku]);
  });
}

test('distinct keys of every string kind, some holding state, some spent, two of another type: decided and stored as one by one, read in one MGET', async () => {
  const { answers, answersAlone, calls, gets } = await bothWays(
    'distinct',
    (prefix) => distinctRequests(prefix, FAKE_EPOCH + 1500),
    async (prefix, alone) => {
      // Half the keys hold state, a quarter of the SKUs are spent (their next request refused).
      for (const [i, ask] of distinctRequests(prefix, FAKE_EPOCH).entries())
        if (i % 2 === 0) await ask(alone);
      for (let i = 1; i < 48; i += 4) {
        const request = {
          prefix: `${prefix}-sku`,
          key: `sku:${i}`,
          policy: policy(i + 3),
          nowMs: FAKE_EPOCH + 1000,
        };
        for (let taken = 0; taken < 12; taken++) await alone.consume({ ...request, cost: 1 });
      }
      // A list where a state would be: read as none and deleted, as one by one.
      for (const key of [
        alone.keyOf({ prefix: `${prefix}-ip`, key: 'ip:7', policy: policy(7) }),
        alone.keyOf({ prefix: `${prefix}-sku`, key: 'sku:12', policy: policy(15) }),
      ]) {
        await client.del(key);
        await client.rpush(key, 'a', 'b');
      }
    },
  );
  expect(answers).toEqual(answersAlone);
  expectSameKeys(await stored('batch-distinct'), await stored('alone-distinct'));
  // The sequence reaches admissions and refusals, or it would prove little.
  const allowed = (answersAlone as Array<{ verdicts: Array<Array<{ allowed: boolean }>> }>).map(
    ({ verdicts }) => verdicts.every((rules) => rules.every((v) => v.allowed)),
  );
  expect(allowed.filter(Boolean).length).toBeGreaterThan(10);
  expect(allowed.filter((a) => !a).length).toBeGreaterThan(10);
  // Read up front: the keys holding state served by the MGET. (With lists among the keys, MGET's
  // empty answers are each read again, as one by one; so is a refused request's peek.)
  expect(calls.mget).toBeGreaterThanOrEqual(1);
  expect(gets).toBeLessThan(96);
});

/**
 * 60 requests on a hot SKU under six addresses taking turns, time moving on: joint requests,
 * one-key consumes of the SKU, give-backs (kinds that delay) and a reset among them.
 */
function hotRequests(sku: Policy, ip: Policy, prefix: string): Ask[] {
  let nowMs = FAKE_EPOCH;
  return Array.from({ length: 60 }, (_, i): Ask => {
    nowMs += STEPS_MS[i % STEPS_MS.length] as number;
    const cost = COSTS[i % COSTS.length] as number;
    const hot = { prefix: `${prefix}-sku`, key: 'sku:hot', policy: sku, cost, nowMs };
    if (i === 41) return (store) => store.reset(hot);
    if (i % 9 === 8 && givesBack(sku))
      return (store) => (store.giveBack as NonNullable<Store['giveBack']>)({ ...hot, cost: 1 });
    if (i % 7 === 3) return (store) => store.consume(hot);
    const parts = [part(prefix, `ip:${i % 6}`, [ip], 1, nowMs), part(prefix, 'sku:hot', [sku], cost, nowMs)];
    return (store) => store.consumeAll(parts);
  });
}

test.each(POLICIES.map((sku, i) => [`${i} ${stateKindOf(sku)}`, sku, policy(i + 2)] as const))(
  'SKU policy %s: a hot SKU under addresses taking turns, with one-key requests, give-backs, a reset and a list: decided and stored as one by one, the SKU read once a call',
  async (_, sku, ip) => {
    const name = `hot-${POLICIES.indexOf(sku)}`;
    const { answers, answersAlone, gets, scripts } = await bothWays(
      name,
      (prefix) => hotRequests(sku, ip, prefix),
      async (prefix, alone) => {
        await client.rpush(alone.keyOf({ prefix: `${prefix}-ip`, key: 'ip:1', policy: ip }), 'a', 'b');
      },
    );
    expect(answers).toEqual(answersAlone);
    expectSameKeys(await stored(`batch-${name}`), await stored(`alone-${name}`));
    // The view: each key read once a call (the SKU and six addresses), not once per request.
    expect(gets).toBeLessThanOrEqual(7 * scripts);
  },
);

test('[perIp, perSku] on distinct keys, all admitted: one MGET for the batch and one write per key', async () => {
  const [ip, sku] = [policy(0), policy(5)];
  const asked = (prefix: string): Ask[] =>
    Array.from({ length: 60 }, (_, i): Ask => {
      const parts = [
        part(prefix, `ip:${i}`, [ip], 1, FAKE_EPOCH + 100),
        part(prefix, `sku:${i}`, [sku], 1, FAKE_EPOCH + 100),
      ];
      return (store) => store.consumeAll(parts);
    });
  const { answers, answersAlone, calls, gets, scripts } = await bothWays(
    'admitted',
    asked,
    async (prefix, alone) => {
      // Every key holds state: MGET finds each, no EXISTS needed.
      for (const ask of asked(prefix)) await ask(alone);
    },
  );
  expect(answers).toEqual(answersAlone);
  expectSameKeys(await stored('batch-admitted'), await stored('alone-admitted'));
  expect(scripts).toBe(1);
  expect(gets).toBe(0);
  expect(calls.mget).toBe(1);
  expect((calls.psetex ?? 0) + (calls.set ?? 0)).toBe(120);
});
