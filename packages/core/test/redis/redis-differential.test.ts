import type { ChainableCommander, default as Redis } from 'ioredis';
import { ALGORITHMS, RedisStore, type AlgorithmName, type Policy, type PolicyOptions } from '../../src';
import { capacityOf, resolvePolicy, runStep } from '../../src/adapter';
import {
  blockedVerdict,
  blockTtlMs,
  liveBlock,
  nextBlock,
  refusalOfBlock,
  startsBlock,
  type BlockRecord,
} from '../../src/algorithms/block';
import type { JointPart, JointVerdicts, RulesRequest } from '../../src/stores/store';
import { jointCall } from '../../src/stores/redis/redis-joint';
import type { BlockPolicy, Verdict } from '../../src/types';
import {
  COMMAND_NAMES,
  policyCommandName,
  policyScriptArgs,
  scriptArgs,
  toVerdict,
} from '../../src/stores/redis/redis-command';
import { JOINT_SCRIPT, policyScript, stateKindOf } from '../../src/stores/redis/scripts';
import { PACKED_LOG_MAX } from '../../src/stores/redis/scripts/packed-log.lua';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { ExpiryCheck } from './expiry-check';
import { comparableState } from './packed-state';
import { seededRandom, type Random } from './seeded-random';

/**
 * The Lua scripts against the TypeScript reference: seeded random sequences of (time, key, cost)
 * through `runStep` and through the script must give identical verdicts, identical stored state
 * and a TTL equal to the step's `ttlMs` (the sliding log: identical live entries, and the expiry
 * of expiry-check.ts; a window admitted in a window that has counted keeps the expiry it has).
 *
 * Fake time jumps by minutes while real time creeps by milliseconds, so Redis could expire a key
 * (in real time) that the reference, on fake time, still holds. Each step is therefore followed,
 * in the same MULTI/EXEC, by a read of the state and its PTTL and then a PERSIST: no key expires
 * mid-sequence, and a step that must not write (a rejection, a peek) is seen leaving no TTL.
 */
const STEPS = 800;
const KEYS = ['a', '{b}', ''];

const POLICIES: Record<AlgorithmName, PolicyOptions[]> = {
  gcra: buckets('gcra'),
  'token-bucket': buckets('token-bucket'),
  'leaky-bucket': [
    { algorithm: 'leaky-bucket', rate: '0.5r/s' },
    { algorithm: 'leaky-bucket', rate: '7r/m', burst: 5, nodelay: true },
    { algorithm: 'leaky-bucket', rate: '2.5r/s', burst: 6, delay: 2 },
    { algorithm: 'leaky-bucket', rate: '10r/s', burst: 5 },
    { algorithm: 'leaky-bucket', rate: '7r/m', burst: 4, delay: 4 },
    { algorithm: 'leaky-bucket', rate: { limit: 3, window: 7 }, burst: 2, nodelay: true },
  ],
  'fixed-window': windows('fixed-window'),
  'sliding-window': windows('sliding-window'),
  'sliding-log': [
    ...windows('sliding-log'),
    // The longest log kept as one string, and the shortest kept as a sorted set.
    { algorithm: 'sliding-log', rate: { limit: PACKED_LOG_MAX, window: '1m' } },
    { algorithm: 'sliding-log', rate: { limit: PACKED_LOG_MAX + 1, window: '1m' } },
  ],
};

function buckets(algorithm: 'gcra' | 'token-bucket'): PolicyOptions[] {
  return [
    { algorithm, rate: '0.5r/s', burst: 0 },
    { algorithm, rate: '7r/m', burst: 3 },
    { algorithm, rate: '2.5r/s', burst: 4 },
    { algorithm, rate: '100/1m' },
    { algorithm, rate: { limit: 3, window: 7 }, burst: 1 },
    // A queue: admissions delayed up to maxWaitMs, state running ahead of (or below) the capacity.
    { algorithm, rate: '2.5r/s', burst: 2, queue: { maxWaitMs: 1500 } },
    { algorithm, rate: '7r/m', queue: { maxWaitMs: 20_000 } },
    // Warm-up replaces the step with Guava's (fractional state, written with %.17g).
    { algorithm, rate: '2r/s', warmup: '4s' },
    { algorithm, rate: '7r/m', warmup: '1m', queue: { maxWaitMs: 30_000 } },
    { algorithm, rate: { limit: 3, window: 7000 }, warmup: 2500, queue: { maxWaitMs: 999 } },
  ];
}

function windows(algorithm: 'fixed-window' | 'sliding-window' | 'sliding-log'): PolicyOptions[] {
  return [
    { algorithm, rate: '0.5r/s' },
    { algorithm, rate: '7r/m' },
    { algorithm, rate: '2.5r/s' },
    { algorithm, rate: '100/1m' },
    { algorithm, rate: { limit: 3, window: 7 } },
  ];
}

interface Request {
  readonly nowMs: number;
  readonly key: string;
  readonly cost: number;
}

/** Times that stand still, creep, jump past every TTL and step back (nginx's >1 min branch too). */
function requests(policy: Policy, random: Random): Request[] {
  const bucket = ['gcra', 'token-bucket', 'leaky-bucket'].includes(policy.algorithm);
  const capacity = bucket ? policy.burst + 1 : policy.limit;
  const interval = Math.ceil(policy.windowMs / policy.limit);
  let now = FAKE_EPOCH + random.int(0, 10 * policy.windowMs);
  const out: Request[] = [];
  for (let i = 0; i < STEPS; i++) {
    const roll = random();
    if (roll < 0.25) now += 0;
    else if (roll < 0.45) now += random.int(0, Math.ceil(interval / 3));
    else if (roll < 0.7) now += random.int(0, 2 * interval);
    else if (roll < 0.85) now += random.int(0, 2 * policy.windowMs);
    else if (roll < 0.92) now += random.int(0, (capacity + 2) * interval + 2 * policy.windowMs);
    else if (roll < 0.98) now -= random.int(1, Math.min(2000, interval));
    else now -= 60_001 + random.int(0, 5000);
    const c = random();
    const cost =
      c < 0.1
        ? 0
        : c < 0.7
          ? 1
          : c < 0.9
            ? random.int(1, Math.min(capacity, 3))
            : c < 0.95
              ? capacity
              : capacity + random.int(1, 2);
    out.push({ nowMs: now, key: random.pick(KEYS), cost });
  }
  return out;
}

const redis = useRedisServer();
let client: Redis;
let store: RedisStore;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
  store = new RedisStore({ client });
});

/**
 * Both scripts a single rule may run: its kind's shared script, reading the policy's numbers
 * from its arguments, and the policy's own, with the numbers written into the source.
 */
const SCRIPTS = ['shared script', "policy's own script"] as const;

describe.each(ALGORITHMS.flatMap((algorithm) => SCRIPTS.map((script) => [algorithm, script] as const)))(
  '%s, %s: Lua = TypeScript',
  (algorithm, script) => {
    test.each(POLICIES[algorithm].map((options, i) => [JSON.stringify(options), options, 1000 + i] as const))(
      '%s',
      async (_name, options, seed) => {
        const policy = resolvePolicy(options);
        const own = script !== 'shared script';
        // The store defines a policy's own script on first use; the test defines it as the store would.
        const ownName = policyCommandName(policyScript(policy));
        if (own) client.defineCommand(ownName, { lua: policyScript(policy), numberOfKeys: 1 });
        const prefix = `diff-${++sequence}`;
        const plan = requests(policy, seededRandom(seed * 7919 + ALGORITHMS.indexOf(algorithm)));
        // A MULTI of the store's client carries the scripts the store defined on it.
        const multi = client.multi();
        const run = (multi as unknown as Record<string, (...args: string[]) => ChainableCommander>)[
          own ? ownName : COMMAND_NAMES[stateKindOf(policy)]
        ] as (...args: string[]) => ChainableCommander;
        const argsOf = own ? policyScriptArgs : scriptArgs;
        for (const request of plan) {
          const key = store.keyOf({ prefix, key: request.key, policy });
          run.call(multi, key, ...argsOf({ policy, cost: request.cost, nowMs: request.nowMs }));
          if (stateKindOf(policy) === 'sliding-log') multi.zrange(key, 0, -1, 'WITHSCORES');
          else multi.getBuffer(key);
          multi.pttl(key);
          multi.persist(key);
        }
        const started = Date.now();
        const replies = (await multi.exec()) ?? [];
        const tookMs = Date.now() - started;

        const model = new Map<string, unknown>();
        const mismatches: object[] = [];
        const expiry = new ExpiryCheck(stateKindOf(policy), policy.windowMs, () => tookMs);
        plan.forEach((request, i) => {
          type Reply = [error: unknown, value: unknown];
          const [[scriptError, reply], [, raw], [, pttl]] = replies.slice(4 * i, 4 * i + 3) as [
            Reply,
            Reply,
            Reply,
          ];
          const before = model.get(request.key);
          const step = runStep(before, policy, request.nowMs, request.cost);
          if (step.state !== undefined) model.set(request.key, step.state);
          const after = model.get(request.key);
          const verdict = scriptError === null ? toVerdict(reply, policy) : String(scriptError);
          const state = comparableState(stateKindOf(policy), raw, policy.windowMs);
          const ttl = pttl as number;
          // -2: no key; -1: no TTL, i.e. the previous step's PERSIST left untouched.
          const ttlOk =
            after === undefined
              ? ttl === -2
              : step.state !== undefined
                ? expiry.ok(request.key, request.nowMs, step.ttlMs, ttl)
                : ttl === -1;
          if (
            JSON.stringify(verdict) !== JSON.stringify(step.verdict) ||
            JSON.stringify(state) !== JSON.stringify(after) ||
            !ttlOk
          ) {
            mismatches.push({
              i,
              request,
              before,
              lua: { verdict, state, ttl },
              ts: { ...step, state: after },
            });
          }
        });
        expect(mismatches.slice(0, 3)).toEqual([]);
        // The sequences reach every kind of answer, or they would prove little.
        const verdicts = plan.map((_, i) => toVerdict(replies[4 * i]?.[1], policy));
        expect(verdicts.some((v) => v.allowed && v.remaining === 0)).toBe(true);
        expect(verdicts.some((v) => v.reason === 'limited')).toBe(true);
        expect(verdicts.some((v) => v.reason === 'cost-exceeds-capacity')).toBe(true);
        // Delays need room between delay=N and the burst.
        if (algorithm === 'leaky-bucket' && !policy.nodelay && policy.delay < policy.burst)
          expect(verdicts.some((v) => v.delayMs > 0)).toBe(true);
        if (policy.maxWaitMs > 0) expect(verdicts.some((v) => v.allowed && v.delayMs > 0)).toBe(true);
      },
    );
  },
);

/**
 * The block (the limiter's `block` option) in Lua against its TypeScript reference
 * (`algorithms/block.ts` around `runStep`, as MemoryStore runs it): seeded sequences whose time
 * stays within blocks, passes their end, and passes `maxDurationMs` after it, for every
 * algorithm, through the joint script as a limiter with a block sends it. Each step, in one
 * MULTI: the script, the block record and its PTTL, then PERSIST of every key (fake time jumps
 * while real time creeps, as above). Equal verdicts (the blocked refusals' waits included), equal
 * records, and a record's TTL its block's end + maxDurationMs.
 */
describe('block: Lua = TypeScript', () => {
  const BLOCK: BlockPolicy = { durationMs: 60_000, backoff: 2, maxDurationMs: 180_000 };
  const JOINT = 'sluiceJointForTest';
  beforeAll(() => {
    client.defineCommand(JOINT, { lua: JOINT_SCRIPT });
  });

  test.each(ALGORITHMS)('%s', async (algorithm) => {
    const policy = resolvePolicy(
      algorithm === 'sliding-log' || algorithm.includes('window')
        ? { algorithm, rate: '3/1m' }
        : { algorithm, rate: '3/1m', burst: 2, ...(algorithm === 'leaky-bucket' ? { nodelay: true } : {}) },
    );
    const random = seededRandom(4242 + ALGORITHMS.indexOf(algorithm));
    const prefix = `diff-block-${++sequence}`;
    let now = FAKE_EPOCH;
    const plan: Request[] = [];
    for (let i = 0; i < 3000; i++) {
      const roll = random();
      // Bursts of requests, waits within a block, past its end, and past maxDuration after it.
      if (roll < 0.6) now += random.int(0, 2000);
      else if (roll < 0.8) now += random.int(0, 40_000);
      else if (roll < 0.93) now += random.int(50_000, 200_000);
      else if (roll < 0.98) now += random.int(200_000, 900_000);
      else now -= random.int(1, 5000);
      const c = random();
      plan.push({ nowMs: now, key: random.pick(['a', '{b}']), cost: c < 0.1 ? 0 : c < 0.95 ? 1 : 4 });
    }
    const keysOf = (part: RulesRequest): string[] => [
      store.keyOf({ ...part, policy }),
      store.blockKeyOf(part),
    ];
    const multi = client.multi() as unknown as Record<string, (...args: unknown[]) => ChainableCommander> &
      ChainableCommander;
    const calls = plan.map(({ nowMs, key, cost }) => {
      const part: JointPart = { prefix, key, policies: [policy], cost, nowMs, block: BLOCK };
      const call = jointCall(undefined as never, [part], keysOf);
      const { keys, own } = call;
      (multi[JOINT] as (...args: unknown[]) => ChainableCommander).call(
        multi,
        keys.length,
        ...keys,
        String(nowMs),
        ...(own.shared ?? []),
      );
      multi.getBuffer(keys[1] as string);
      multi.pttl(keys[1] as string);
      for (const k of keys) multi.persist(k);
      return call;
    });
    const replies = (await multi.exec()) ?? [];

    // The reference: MemoryStore's order of operations, on plain objects.
    const states = new Map<string, unknown>();
    const records = new Map<string, BlockRecord>();
    const mismatches: object[] = [];
    const seen = new Set<string>();
    plan.forEach((request, i) => {
      const at = 5 * i;
      const [[error, reply], [, raw], [, pttl]] = replies.slice(at, at + 3) as [
        [unknown, unknown],
        [unknown, unknown],
        [unknown, unknown],
      ];
      const { nowMs: t, key, cost } = request;
      const last = records.get(key);
      const live = liveBlock(last, BLOCK, t);
      let verdict: Verdict;
      let expectedTtl: number | undefined;
      if (live !== undefined && t < live.until) {
        verdict = blockedVerdict(capacityOf(policy), live, t);
      } else {
        const step = runStep(states.get(key), policy, t, cost);
        if (step.state !== undefined) states.set(key, step.state);
        verdict = step.verdict;
        if (startsBlock(verdict, cost)) {
          const next = nextBlock(live, BLOCK, t);
          records.set(key, next);
          expectedTtl = blockTtlMs(next, BLOCK, t);
          verdict = refusalOfBlock(verdict, next, t);
        }
      }
      const lua =
        error === null ? (calls[i]?.own.readAlone?.(reply) as JointVerdicts).verdicts[0]?.[0] : error;
      const record = records.get(key);
      const stored =
        raw instanceof Buffer && raw.length === 16
          ? { until: raw.readDoubleLE(0), lengthMs: raw.readDoubleLE(8) }
          : undefined;
      // A record is written by a refusal only (its TTL then set); else it keeps its TTL, PERSISTed.
      const ttlOk =
        expectedTtl === undefined
          ? record === undefined
            ? pttl === -2
            : pttl === -1
          : pttl === expectedTtl || (pttl as number) >= expectedTtl - 1000;
      if (
        JSON.stringify(lua) !== JSON.stringify(verdict) ||
        JSON.stringify(stored) !== JSON.stringify(record) ||
        !ttlOk
      ) {
        mismatches.push({
          i,
          request,
          lua: { verdict: lua, stored, pttl },
          ts: { verdict, record, expectedTtl },
        });
      }
      seen.add(verdict.reason ?? 'admitted');
      if (record !== undefined && live !== undefined && expectedTtl !== undefined)
        seen.add(`backoff ${record.lengthMs}`);
      // A block after maxDuration of good behaviour following an earlier one: duration again.
      if (last !== undefined && live === undefined && expectedTtl !== undefined) seen.add('afresh');
    });
    expect(mismatches.slice(0, 3)).toEqual([]);
    // The sequences reach blocks, refusals within them, longer blocks up to the cap, and blocks
    // started afresh after maxDuration of good behaviour.
    expect([...seen]).toEqual(
      expect.arrayContaining([
        'admitted',
        'limited',
        'blocked',
        'backoff 120000',
        'backoff 180000',
        'afresh',
      ]),
    );
  });
});
