import type Redis from 'ioredis';
import {
  MemoryStore,
  RedisStore,
  type Policy,
  type PolicyOptions,
  type Store,
  type Verdict,
} from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { scriptCalls } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';
import { seededRandom, type Random } from './seeded-random';

/**
 * Issue 11, items 1 and 2: requests asked together are decided in arrival order, each exactly
 * as alone. A seeded mix of every operation (consume, peek, several rules, give-back, reset)
 * over every kind of policy (six algorithms, a queue, warm-up, nginx's delay, an override's
 * scope) is asked of a batching RedisStore all at once, and one by one of the MemoryStore (the
 * TypeScript reference): every answer must be the same.
 */
const redis = useRedisServer();
let client: Redis;

beforeAll(() => {
  client = redis.client();
});

const OPTIONS: PolicyOptions[] = [
  { algorithm: 'gcra', rate: '7r/m', burst: 3 },
  { algorithm: 'gcra', rate: '5r/s', queue: { maxWaitMs: 1000 } },
  { algorithm: 'token-bucket', rate: '2.5r/s', burst: 4, queue: { maxWaitMs: 600 } },
  { algorithm: 'token-bucket', rate: '2r/s', warmup: '4s' },
  { algorithm: 'leaky-bucket', rate: '2.5r/s', burst: 6, delay: 2 },
  { algorithm: 'leaky-bucket', rate: '7r/m', burst: 4, nodelay: true },
  { algorithm: 'fixed-window', rate: '5/2s' },
  { algorithm: 'sliding-window', rate: '6/3s' },
  { algorithm: 'sliding-log', rate: '4/2s' },
];
const POLICIES: Policy[] = OPTIONS.map((options) => resolvePolicy(options));
const RULES: Policy[][] = [
  [POLICIES[0] as Policy, POLICIES[6] as Policy],
  [POLICIES[1] as Policy, POLICIES[8] as Policy, POLICIES[7] as Policy],
];

/** One request of the mix, and how to ask it of a store. */
interface Step {
  readonly label: string;
  ask(store: Store): Promise<Verdict | Verdict[] | undefined>;
}

/**
 * `count` requests on three keys; each policy (and each set of rules) has a prefix of its own,
 * as each limiter has, so a key's state is only ever read by the policy that wrote it.
 */
function mix(random: Random, count: number, name: string): Step[] {
  const steps: Step[] = [];
  let now = FAKE_EPOCH;
  for (let i = 0; i < count; i++) {
    now += random.pick([0, 0, 0, 1, 37, 150, 400, 2500]);
    const nowMs = now;
    const key = random.pick(['a', 'b', '{c}']);
    const cost = random.pick([0, 1, 1, 1, 2, 3]);
    const scope = random() < 0.15 ? 'override' : undefined;
    const roll = random();
    if (roll < 0.7) {
      const policy = random.pick(POLICIES);
      const prefix = `${name}-${POLICIES.indexOf(policy)}`;
      steps.push({
        label: `${i}: consume ${key} ${policy.algorithm} cost ${cost}`,
        ask: (store) => store.consume({ prefix, key, policy, cost, nowMs, scope }),
      });
    } else if (roll < 0.85) {
      const policies = random.pick(RULES);
      const prefix = `${name}-rules-${RULES.indexOf(policies)}`;
      steps.push({
        label: `${i}: rules ${key} cost ${cost}`,
        ask: (store) =>
          (store.consumeRules as NonNullable<Store['consumeRules']>)({
            prefix,
            key,
            policies,
            cost,
            nowMs,
            scope,
          }),
      });
    } else if (roll < 0.93) {
      const policy = random.pick(POLICIES);
      const prefix = `${name}-${POLICIES.indexOf(policy)}`;
      const back = Math.max(1, cost);
      steps.push({
        label: `${i}: give back ${key} ${policy.algorithm} ${back}`,
        ask: (store) =>
          (store.giveBack as NonNullable<Store['giveBack']>)({
            prefix,
            key,
            policy,
            cost: back,
            nowMs,
            scope,
          }).then(() => undefined),
      });
    } else {
      const policy = random.pick(POLICIES);
      const prefix = `${name}-${POLICIES.indexOf(policy)}`;
      steps.push({
        label: `${i}: reset ${key} ${policy.algorithm}`,
        ask: (store) => store.reset({ prefix, key, policy, scope }).then(() => undefined),
      });
    }
  }
  return steps;
}

/** A verdict as plain data (the memory store's are class instances with `reason: undefined`). */
function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value === undefined) return value;
  return Object.fromEntries(Object.entries(value as object).filter(([, v]) => v !== undefined));
}

// 600: two calls alone, then nine full batches at once (MAX_FULL_IN_FLIGHT); 1200: more full
// batches than may fly at once, the rest waiting their turn.
test.each([
  [1, 600],
  [2, 600],
  [3, 600],
  [4, 1200],
])('seed %i: %i requests asked at once are decided as one by one on the reference', async (seed, count) => {
  const steps = mix(seededRandom(seed), count, `order-${seed}`);
  const labelled = (values: unknown[]) => values.map((value, i) => [steps[i]?.label, plain(value)]);
  const oneByOne = async (store: Store): Promise<unknown[]> => {
    const answers: unknown[] = [];
    for (const step of steps) answers.push(await step.ask(store));
    return labelled(answers);
  };
  const expected = await oneByOne(new MemoryStore());
  await client.flushall();
  expect(await oneByOne(new RedisStore({ client, batch: false }))).toEqual(expected);

  await client.flushall();
  await client.config('RESETSTAT');
  const store = new RedisStore({ client });
  expect(labelled(await Promise.all(steps.map((step) => step.ask(store))))).toEqual(expected);
  // They really were batched: far fewer calls than requests.
  expect(await scriptCalls(client)).toBeLessThan(steps.length / 20);
});
