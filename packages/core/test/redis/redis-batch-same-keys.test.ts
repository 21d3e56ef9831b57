import type Redis from 'ioredis';
import { RedisStore, type Policy, type Store } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { givesBack } from '../../src/stores/redis/scripts';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { expectSameKeys, storedKeys } from './stored-keys';
import { STRING_STATE_POLICIES } from './string-state-policies';

/**
 * A run of alike requests on the same keys (a flash sale's hot item) sends its keys once
 * (`runBatch`: its count negated). Every path of the batch script reads them so: a one-key run
 * of a string kind (through the view), the sliding log and several rules (the generic consume),
 * give-backs and resets, with distinct keys and other runs around them. Each is asked all at
 * once of a batching store and one by one of a store without batching: the same answers, the
 * same state left.
 */
const redis = useRedisServer();
let client: Redis;

beforeAll(() => {
  client = redis.client();
});

const LOG = resolvePolicy({ algorithm: 'sliding-log', rate: '9/1m' });
const RULES: Policy[] = [STRING_STATE_POLICIES[0] as Policy, STRING_STATE_POLICIES[5] as Policy];

type Ask = (store: Store) => Promise<unknown>;

/** `count` alike requests on `key` at `nowMs`, each `op` of `policy` (or of the rules). */
function run(
  prefix: string,
  key: string,
  policy: Policy | 'rules',
  op: 'consume' | 'give back' | 'reset',
  count: number,
  nowMs: number,
): Ask[] {
  return Array.from({ length: count }, (): Ask => {
    if (policy === 'rules') {
      return (store) =>
        (store.consumeRules as NonNullable<Store['consumeRules']>)({
          prefix,
          key,
          policies: RULES,
          cost: 1,
          nowMs,
        });
    }
    if (op === 'give back')
      return (store) =>
        (store.giveBack as NonNullable<Store['giveBack']>)({ prefix, key, policy, cost: 1, nowMs });
    if (op === 'reset') return (store) => store.reset({ prefix, key, policy, nowMs });
    return (store) => store.consume({ prefix, key, policy, cost: 1, nowMs });
  });
}

/** Every request of the mix, in order: runs on the hot key among distinct keys, for one policy. */
function mix(prefix: string, policy: Policy | 'rules', nowMs: number): Ask[] {
  return [
    // Two alone (the slot's places), then the batch.
    ...run(prefix, 'warm-1', policy, 'consume', 1, nowMs),
    ...run(prefix, 'warm-2', policy, 'consume', 1, nowMs),
    ...run(prefix, 'hot', policy, 'consume', 7, nowMs),
    ...run(prefix, 'a', policy, 'consume', 1, nowMs),
    ...run(prefix, 'b', policy, 'consume', 1, nowMs),
    ...run(prefix, 'hot', policy, 'consume', 5, nowMs + 10),
    ...(policy !== 'rules' && givesBack(policy)
      ? run(prefix, 'hot', policy, 'give back', 3, nowMs + 10)
      : []),
    ...(policy === 'rules' ? [] : run(prefix, 'hot', policy, 'reset', 2, nowMs + 10)),
    ...run(prefix, 'hot', policy, 'consume', 4, nowMs + 20),
  ];
}

const CASES: Array<[string, Policy | 'rules']> = [
  ...STRING_STATE_POLICIES.map((policy): [string, Policy] => [
    `${policy.algorithm}${policy.warmupMs > 0 ? ' warm-up' : ''}${policy.maxWaitMs > 0 ? ' queue' : ''}`,
    policy,
  ]),
  ['sliding-log', LOG],
  ['several rules', 'rules'],
];

test.each(CASES)(
  '%s: runs on a hot key among others, asked at once, decide and store as one by one',
  async (name, policy) => {
    const tag = name.replace(/ /g, '-');
    const alone = new RedisStore({ client, batch: false });
    const answersAlone: unknown[] = [];
    for (const ask of mix(`alone-${tag}`, policy, FAKE_EPOCH)) answersAlone.push(await ask(alone));
    const batched = new RedisStore({ client });
    const answers = await Promise.all(mix(`batch-${tag}`, policy, FAKE_EPOCH).map((ask) => ask(batched)));
    expect(answers).toEqual(answersAlone);
    expectSameKeys(await storedKeys(client, `batch-${tag}`), await storedKeys(client, `alone-${tag}`));
  },
);
