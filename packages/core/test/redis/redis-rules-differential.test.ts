import type { ChainableCommander, default as Redis } from 'ioredis';
import { RedisStore, type Policy, type PolicyOptions, type Verdict } from '../../src';
import { resolvePolicy, runStep } from '../../src/adapter';
import { MULTI_COMMAND_NAME, rulesArgs, toVerdicts } from '../../src/stores/redis/redis-command';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { stateKindOf } from '../../src/stores/redis/scripts';
import { PACKED_LOG_MAX } from '../../src/stores/redis/scripts/packed-log.lua';
import { ExpiryCheck } from './expiry-check';
import { comparableState } from './packed-state';
import { seededRandom, type Random } from './seeded-random';

/**
 * The several-rules script against the TypeScript reference: seeded random sequences of (time,
 * key, cost) through `runStep` on every rule — all states written only when every rule admits,
 * the would-be admitters reporting a peek otherwise — and through the script must give identical
 * verdicts, identical stored states and, per key, a TTL equal to its step's `ttlMs`.
 *
 * As in the single-rule differential test, each step is followed in the same MULTI/EXEC by a
 * read of every rule's state and PTTL, then a PERSIST, so that no key expires mid-sequence.
 */
const STEPS = 600;
const KEYS = ['a', '{b}', ''];

const RULE_SETS: Record<string, PolicyOptions[]> = {
  'gcra + fixed-window': [
    { algorithm: 'gcra', rate: '7r/m', burst: 3 },
    { algorithm: 'fixed-window', rate: '5/1m' },
  ],
  'token-bucket + sliding-window + sliding-log': [
    { algorithm: 'token-bucket', rate: '2.5r/s', burst: 4 },
    { algorithm: 'sliding-window', rate: '7r/m' },
    { algorithm: 'sliding-log', rate: { limit: 3, window: 7 } },
  ],
  // A sliding log kept as a sorted set beside one kept as a string.
  'both sliding logs + gcra': [
    { algorithm: 'sliding-log', rate: { limit: PACKED_LOG_MAX + 1, window: '1m' } },
    { algorithm: 'sliding-log', rate: '5/1s' },
    { algorithm: 'gcra', rate: '7r/m', burst: 3 },
  ],
  'leaky-bucket (delay) + gcra': [
    { algorithm: 'leaky-bucket', rate: '2.5r/s', burst: 6, delay: 2 },
    { algorithm: 'gcra', rate: '0.5r/s', burst: 2 },
  ],
  'every algorithm': [
    { algorithm: 'sliding-log', rate: '5/1s' },
    { algorithm: 'leaky-bucket', rate: '10r/s', burst: 5 },
    { algorithm: 'fixed-window', rate: '7r/m' },
    { algorithm: 'gcra', rate: '100/1m' },
    { algorithm: 'token-bucket', rate: '7r/m', burst: 3 },
    { algorithm: 'sliding-window', rate: '2.5r/s' },
  ],
  'queued gcra + warming token-bucket + fixed-window': [
    { algorithm: 'gcra', rate: '2.5r/s', burst: 2, queue: { maxWaitMs: 1500 } },
    { algorithm: 'token-bucket', rate: '2r/s', warmup: '4s', queue: { maxWaitMs: 2000 } },
    { algorithm: 'fixed-window', rate: '20/1m' },
  ],
  'the same rule twice': [
    { algorithm: 'gcra', rate: '2r/s', burst: 2 },
    { algorithm: 'gcra', rate: '2r/s', burst: 2 },
  ],
};

interface Request {
  readonly nowMs: number;
  readonly key: string;
  readonly cost: number;
}

function capacity(policy: Policy): number {
  if (policy.warmupMs > 0) return 1;
  return ['gcra', 'token-bucket', 'leaky-bucket'].includes(policy.algorithm)
    ? policy.burst + 1
    : policy.limit;
}

/** Times that stand still, creep, jump past every TTL and step back, at the pace of the fastest rule. */
function requests(policies: readonly Policy[], random: Random): Request[] {
  const interval = Math.min(...policies.map((p) => Math.ceil(p.windowMs / p.limit)));
  const longest = Math.max(...policies.map((p) => p.windowMs));
  const most = Math.max(...policies.map(capacity));
  let now = FAKE_EPOCH + random.int(0, 10 * longest);
  const out: Request[] = [];
  for (let i = 0; i < STEPS; i++) {
    const roll = random();
    if (roll < 0.3) now += 0;
    else if (roll < 0.6) now += random.int(0, 2 * interval);
    else if (roll < 0.85) now += random.int(0, Math.ceil(longest / 4));
    else if (roll < 0.93) now += random.int(0, 2 * longest);
    else if (roll < 0.98) now -= random.int(1, Math.min(2000, interval));
    else now -= 60_001 + random.int(0, 5000);
    const c = random();
    const cost = c < 0.1 ? 0 : c < 0.75 ? 1 : c < 0.95 ? random.int(1, 3) : most + 1;
    out.push({ nowMs: now, key: random.pick(KEYS), cost });
  }
  return out;
}

/** The reference: every rule's step; all written or none; would-be admitters peek on a rejection. */
function referenceStep(
  policies: readonly Policy[],
  states: Map<string, unknown>[],
  request: Request,
): { verdicts: Verdict[]; ttls: (number | undefined)[] } {
  const steps = policies.map((policy, i) =>
    runStep(states[i]?.get(request.key), policy, request.nowMs, request.cost),
  );
  const admitted = steps.every((step) => step.verdict.allowed);
  if (!admitted) {
    return {
      verdicts: steps.map((step, i) =>
        step.verdict.allowed && request.cost > 0
          ? runStep(states[i]?.get(request.key), policies[i] as Policy, request.nowMs, 0).verdict
          : step.verdict,
      ),
      ttls: steps.map(() => undefined),
    };
  }
  steps.forEach((step, i) => {
    if (step.state !== undefined) states[i]?.set(request.key, step.state);
  });
  return {
    verdicts: steps.map((step) => step.verdict),
    ttls: steps.map((step) => (step.state === undefined ? undefined : step.ttlMs)),
  };
}

const redis = useRedisServer();
let client: Redis;
let store: RedisStore;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
  store = new RedisStore({ client });
});

test.each(Object.entries(RULE_SETS).map(([name, rules], i) => [name, rules, 2000 + i] as const))(
  'several rules, Lua = TypeScript: %s',
  async (_name, rules, seed) => {
    const policies = rules.map((rule) => resolvePolicy(rule));
    const prefix = `rules-diff-${++sequence}`;
    const plan = requests(policies, seededRandom(seed));
    const multi = client.multi();
    const run = (multi as unknown as Record<string, (...args: string[]) => ChainableCommander>)[
      MULTI_COMMAND_NAME
    ] as (...args: string[]) => ChainableCommander;
    // Per request: the script, then per rule GET/ZRANGE, PTTL and PERSIST.
    const perRequest = 1 + 3 * policies.length;
    for (const request of plan) {
      const keys = store.rulesKeysOf({ prefix, key: request.key, policies });
      run.call(
        multi,
        String(keys.length),
        ...keys,
        ...rulesArgs({ policies, cost: request.cost, nowMs: request.nowMs }),
      );
      keys.forEach((key, i) => {
        if (stateKindOf(policies[i] as Policy) === 'sliding-log') multi.zrange(key, 0, -1, 'WITHSCORES');
        else multi.getBuffer(key);
        multi.pttl(key);
        multi.persist(key);
      });
    }
    const started = Date.now();
    const replies = (await multi.exec()) ?? [];
    const tookMs = Date.now() - started;

    const states = policies.map(() => new Map<string, unknown>());
    const expiries = policies.map(
      (policy) => new ExpiryCheck(stateKindOf(policy), policy.windowMs, () => tookMs),
    );
    const mismatches: object[] = [];
    const seen = new Set<string>();
    plan.forEach((request, r) => {
      type Reply = [error: unknown, value: unknown];
      const at = r * perRequest;
      const [scriptError, reply] = replies[at] as Reply;
      const expected = referenceStep(policies, states, request);
      const verdicts = scriptError === null ? toVerdicts(reply, policies) : String(scriptError);
      const problems: string[] = [];
      if (JSON.stringify(verdicts) !== JSON.stringify(expected.verdicts)) problems.push('verdicts');
      policies.forEach((policy, i) => {
        const [, raw] = replies[at + 1 + 3 * i] as Reply;
        const [, pttl] = replies[at + 2 + 3 * i] as Reply;
        const after = states[i]?.get(request.key);
        const ttlMs = expected.ttls[i];
        const ttl = pttl as number;
        if (
          JSON.stringify(comparableState(stateKindOf(policy), raw, policy.windowMs)) !== JSON.stringify(after)
        )
          problems.push(`state ${i}`);
        // -2: no key; -1: no TTL, i.e. the previous step's PERSIST left untouched.
        const ttlOk =
          after === undefined
            ? ttl === -2
            : ttlMs !== undefined
              ? (expiries[i] as ExpiryCheck).ok(request.key, request.nowMs, ttlMs, ttl)
              : ttl === -1;
        if (!ttlOk) problems.push(`ttl ${i}: ${ttl} for ${ttlMs}`);
      });
      if (problems.length > 0)
        mismatches.push({ r, request, problems, lua: verdicts, ts: expected.verdicts });
      if (Array.isArray(verdicts)) {
        const admitted = verdicts.every((v) => v.allowed);
        seen.add(admitted ? 'admitted' : 'rejected');
        if (!admitted && verdicts.some((v) => v.allowed)) seen.add('rejected by one, admitted by another');
        if (verdicts.some((v) => v.reason === 'cost-exceeds-capacity')) seen.add('cost-exceeds-capacity');
        if (admitted && verdicts.some((v) => v.delayMs > 0)) seen.add('delayed');
      }
    });
    expect(mismatches.slice(0, 3)).toEqual([]);
    // The sequences reach every kind of answer, or they would prove little.
    const kinds = ['admitted', 'rejected', 'cost-exceeds-capacity'];
    if (policies.length > 1 && _name !== 'the same rule twice')
      kinds.push('rejected by one, admitted by another');
    if (policies.some((p) => p.maxWaitMs > 0)) kinds.push('delayed');
    expect([...seen].sort()).toEqual(expect.arrayContaining(kinds));
  },
);
