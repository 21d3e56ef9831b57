import type { ChainableCommander, default as Redis } from 'ioredis';
import { RedisStore, type PolicyOptions, type Receipt } from '../../src';
import { resolvePolicy, runStep } from '../../src/adapter';
import { giveBackOf, giveBackTakenOf, receiptOf } from '../../src/algorithms/give-back';
import {
  COMMAND_NAMES,
  GIVE_BACK_COMMAND_NAME,
  rulesArgs,
  scriptArgs,
} from '../../src/stores/redis/redis-command';
import { stateKindOf } from '../../src/stores/redis/scripts';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { ExpiryCheck } from './expiry-check';
import { comparableState, storedState } from './packed-state';
import { seededRandom } from './seeded-random';

/**
 * The give-back script against `algorithms/give-back.ts`: seeded sequences of consumes and
 * give-backs on one key, through the reference (`runStep`, `giveBackOf`) and through the
 * scripts, must leave identical states with the TTL the reference gives (or no key when it
 * deletes). As in the other differential tests, each step is followed in the same MULTI by a
 * read of the state, its PTTL and a PERSIST.
 */
const STEPS = 500;

type Reply = [error: unknown, value: unknown];

const POLICIES: PolicyOptions[] = [
  { algorithm: 'gcra', rate: '5r/s', queue: { maxWaitMs: 1000 } },
  { algorithm: 'gcra', rate: '7r/m', burst: 2, queue: { maxWaitMs: 30_000 } },
  { algorithm: 'token-bucket', rate: '5r/s', burst: 1, queue: { maxWaitMs: 1000 } },
  { algorithm: 'token-bucket', rate: { limit: 3, window: 7000 }, queue: { maxWaitMs: 4000 } },
  { algorithm: 'leaky-bucket', rate: '2.5r/s', burst: 6, delay: 2 },
  { algorithm: 'leaky-bucket', rate: '7r/m', burst: 4 },
  { algorithm: 'gcra', rate: '2r/s', warmup: '4s', queue: { maxWaitMs: 3000 } },
];

const redis = useRedisServer();
let client: Redis;
let store: RedisStore;

beforeAll(() => {
  client = redis.client();
  store = new RedisStore({ client });
});

test.each(POLICIES.map((options, i) => [JSON.stringify(options), options, 500 + i] as const))(
  'give-back, Lua = TypeScript: %s',
  async (_name, options, seed) => {
    const policy = resolvePolicy(options);
    const back = giveBackOf(policy);
    expect(back).toBeDefined();
    const random = seededRandom(seed);
    const interval = Math.ceil(policy.windowMs / policy.limit);
    const key = store.keyOf({ prefix: `give-back-${seed}`, key: 'k', policy });
    const methods = client as unknown as Record<string, (...args: string[]) => ChainableCommander>;
    const multi = client.multi();
    const multiMethods = multi as unknown as Record<string, (...args: string[]) => ChainableCommander>;
    expect(typeof methods[GIVE_BACK_COMMAND_NAME]).toBe('function');
    let now = FAKE_EPOCH;
    const plan: { nowMs: number; cost: number; giveBack: boolean }[] = [];
    for (let i = 0; i < STEPS; i++) {
      const roll = random();
      if (roll < 0.35) now += 0;
      else if (roll < 0.75) now += random.int(0, interval);
      else if (roll < 0.95) now += random.int(0, 3 * interval);
      else now += random.int(0, 2 * policy.windowMs + (policy.maxWaitMs || 0));
      const giveBack = random() < 0.3;
      const cost = giveBack ? random.int(1, 2) : random() < 0.9 ? 1 : 2;
      plan.push({ nowMs: now, cost, giveBack });
      if (giveBack) {
        multiMethods[GIVE_BACK_COMMAND_NAME]?.call(
          multi,
          '1',
          key,
          ...rulesArgs({ policies: [policy], cost, nowMs: now }),
        );
      } else {
        multiMethods[COMMAND_NAMES[stateKindOf(policy)]]?.call(
          multi,
          key,
          ...scriptArgs({ policy, cost, nowMs: now }),
        );
      }
      multi.getBuffer(key);
      multi.pttl(key);
      multi.persist(key);
    }
    const started = Date.now();
    const replies = (await multi.exec()) ?? [];
    const tookMs = Date.now() - started;

    let model: unknown;
    const mismatches: object[] = [];
    let changes = 0;
    plan.forEach((request, i) => {
      const [[error], [, raw], [, pttl]] = replies.slice(4 * i, 4 * i + 3) as [Reply, Reply, Reply];
      const before = model;
      let ttlMs = -1; // left as it was: the previous PERSIST shows
      if (request.giveBack) {
        const step = model === undefined ? undefined : back?.(model, policy, request.nowMs, request.cost);
        if (step === 'delete') model = undefined;
        else if (step !== undefined) ({ state: model, ttlMs } = step);
        if (step !== undefined) changes++;
      } else {
        const step = runStep(model, policy, request.nowMs, request.cost);
        if (step.state !== undefined) ({ state: model, ttlMs } = step);
      }
      const state = storedState(stateKindOf(policy), raw);
      const ttl = pttl as number;
      const ttlOk =
        model === undefined
          ? ttl === -2
          : ttlMs === -1
            ? ttl === -1
            : ttl <= ttlMs && ttl >= Math.max(0, ttlMs - tookMs - 2);
      if (error !== null || JSON.stringify(state) !== JSON.stringify(model) || !ttlOk) {
        mismatches.push({ i, request, before, lua: { state, ttl, error }, ts: { state: model, ttlMs } });
      }
    });
    expect(mismatches.slice(0, 3)).toEqual([]);
    // The sequences give back often enough to prove something.
    expect(changes).toBeGreaterThan(20);
  },
);

/**
 * Giving back what an admission took, with its receipt, for every algorithm (several limits on a
 * route, decided in order, when a later one refuses): seeded sequences of consumes (one-part
 * joint calls, which return the receipts) and give-backs of earlier admissions, through the
 * reference (`runStep`, `receiptOf`, `giveBackTakenOf`) and through the scripts, must leave equal
 * states with the reference's TTL. The clock creeps, jumps past windows and steps back (past a
 * minute too: nginx's branch), so a give-back may find its window gone or the log trimmed.
 */
const TAKEN_POLICIES: PolicyOptions[] = [
  { algorithm: 'fixed-window', rate: '5/1s' },
  { algorithm: 'fixed-window', rate: { limit: 7, window: 3000 } },
  { algorithm: 'sliding-window', rate: '5/1s' },
  { algorithm: 'sliding-window', rate: { limit: 4, window: 7000 } },
  { algorithm: 'sliding-log', rate: '5/1s' },
  { algorithm: 'sliding-log', rate: { limit: 6, window: 4000 } },
  { algorithm: 'gcra', rate: '5r/s', burst: 3 },
  { algorithm: 'token-bucket', rate: '3r/s', burst: 2, queue: { maxWaitMs: 1000 } },
  { algorithm: 'leaky-bucket', rate: '2.5r/s', burst: 6, nodelay: true },
  { algorithm: 'leaky-bucket', rate: '7r/m', burst: 4 },
  { algorithm: 'gcra', rate: '2r/s', warmup: '4s', queue: { maxWaitMs: 3000 } },
];
const TAKEN_STEPS = 400;

test.each(TAKEN_POLICIES.map((options, i) => [JSON.stringify(options), options, 700 + i] as const))(
  'give-back with receipts, Lua = TypeScript, the clock stepping back: %s',
  async (_name, options, seed) => {
    const policy = resolvePolicy(options);
    const back = giveBackTakenOf(policy);
    const random = seededRandom(seed);
    const interval = Math.ceil(policy.windowMs / policy.limit);
    const kind = stateKindOf(policy);
    const part = { prefix: `taken-${seed}`, key: 'k', policies: [policy] };
    const key = store.keyOf({ prefix: part.prefix, key: 'k', policy });
    // Admissions not yet given back: the reference's receipt and the script's.
    const unreturned: { ts: Receipt; lua: Receipt; cost: number }[] = [];
    let now = FAKE_EPOCH + random.int(0, 3 * policy.windowMs);
    let model: unknown;
    let changes = 0;
    let expiredInRealTime = 0;
    const mismatches: object[] = [];
    let tookMs = 0;
    const expiry = new ExpiryCheck(kind, policy.windowMs, () => tookMs);
    for (let i = 0; i < TAKEN_STEPS; i++) {
      const roll = random();
      if (roll < 0.3) now += 0;
      else if (roll < 0.7) now += random.int(0, interval);
      else if (roll < 0.88) now += random.int(0, 3 * interval);
      else if (roll < 0.93) now += random.int(0, 2 * policy.windowMs);
      else if (roll < 0.99) now -= random.int(1, Math.min(2000, interval));
      else now -= 60_001 + random.int(0, 5000);
      const before = model;
      let ttlMs = -1; // left as it was: the previous PERSIST shows
      const started = Date.now();
      const giving = unreturned.length > 0 && random() < 0.4;
      let request: object;
      if (giving) {
        const [taken] = unreturned.splice(random.int(0, unreturned.length - 1), 1);
        const { ts, lua, cost } = taken as (typeof unreturned)[number];
        request = { giveBack: ts, now, cost };
        await store.giveBackTaken({ ...part, cost, nowMs: now }, [lua]);
        const step = model === undefined ? undefined : back(model, policy, now, cost, ts);
        if (step === 'delete') model = undefined;
        else if (step !== undefined) ({ state: model, ttlMs } = step);
        if (step !== undefined) changes++;
      } else {
        const cost = random() < 0.85 ? 1 : 2;
        request = { consume: cost, now };
        const { verdicts, receipts } = await store.consumeAll([{ ...part, cost, nowMs: now }]);
        const step = runStep(model, policy, now, cost);
        if (step.state !== undefined) {
          ({ state: model, ttlMs } = step);
          const lua = receipts[0]?.[0] as Receipt;
          const ts = receiptOf(policy, step);
          if (lua.at !== ts.at) mismatches.push({ i, request, receipts: { lua, ts } });
          unreturned.push({ ts, lua, cost });
        }
        if (verdicts[0]?.[0]?.allowed !== step.verdict.allowed)
          mismatches.push({ i, request, verdicts: { lua: verdicts[0], ts: step.verdict } });
      }
      const read = client.multi();
      if (kind === 'sliding-log') read.zrange(key, 0, -1, 'WITHSCORES');
      else read.getBuffer(key);
      read.pttl(key).persist(key);
      const [[, raw], [, pttl]] = ((await read.exec()) ?? []) as [Reply, Reply];
      tookMs = Date.now() - started;
      const state = comparableState(kind, raw, policy.windowMs);
      const ttl = pttl as number;
      if (ttl === -2 && model !== undefined && ttlMs !== -1 && ttlMs <= tookMs + 2) {
        // The state was written with a TTL shorter than this step took in real time (a window
        // ending a few ms after the fake clock's now), and Redis expired it before the read: as
        // the reference would once its clock passed the TTL. Both go on from no state.
        model = undefined;
        expiredInRealTime++;
        continue;
      }
      const ttlOk =
        model === undefined ? ttl === -2 : ttlMs === -1 ? ttl === -1 : expiry.ok(key, now, ttlMs, ttl);
      if (JSON.stringify(state) !== JSON.stringify(model) || !ttlOk)
        mismatches.push({ i, request, before, lua: { state, ttl }, ts: { state: model, ttlMs } });
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
    // The sequences give back often enough to prove something (warm-up only while a turn waits),
    // and the real clock resynchronised the two rarely (only a loaded machine does it at all).
    expect(changes).toBeGreaterThan(10);
    expect(expiredInRealTime).toBeLessThan(TAKEN_STEPS / 20);
  },
);
