import type Redis from 'ioredis';
import { createLimiter, RedisStore, type Decision, type Limiter, type PolicyOptions } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { MAX_POLICY_SCRIPTS } from '../../src/stores/redis/redis-store';
import { givesBack, stateKindOf, type StateKind } from '../../src/stores/redis/scripts';
import { FAKE_EPOCH, fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { PACKED_LOG_MAX } from '../../src/stores/redis/scripts/packed-log.lua';
import { packLog, PACKED_FIELDS, packState } from './packed-state';

/**
 * Issue #16 item 9: whatever a key holds — another type, garbage, a truncated or non-finite
 * packed state, times from far in the future, amounts past the policy's capacity — a decision
 * on it is exactly a fresh key's: never a store error (which would count toward the circuit and
 * hand every other key to `onStoreError`), and the key is left holding what a fresh key's
 * decision leaves (valid state with its TTL, or nothing).
 */
const NOW = FAKE_EPOCH + 123_456;
const YEAR_MS = 365 * 86_400_000;
/** The limit of the sliding log kept as a sorted set. */
const LOG_LIMIT = PACKED_LOG_MAX + 5;

const POLICIES: Record<StateKind, PolicyOptions> = {
  gcra: { algorithm: 'gcra', rate: '10r/s', burst: 4 },
  'token-bucket': { algorithm: 'token-bucket', rate: '10r/s', burst: 4, queue: { maxWaitMs: 1000 } },
  'leaky-bucket': { algorithm: 'leaky-bucket', rate: '10r/s', burst: 5 },
  'fixed-window': { algorithm: 'fixed-window', rate: '5/1m' },
  'sliding-window': { algorithm: 'sliding-window', rate: '5/1m' },
  // Past PACKED_LOG_MAX: a sorted set.
  'sliding-log': { algorithm: 'sliding-log', rate: { limit: LOG_LIMIT, window: '1m' } },
  'warm-up': { algorithm: 'gcra', rate: '2r/s', warmup: '4s' },
  'packed-log': { algorithm: 'sliding-log', rate: '5/1m' },
};

type Corrupt = (client: Redis, key: string) => Promise<unknown>;
const TIME_FIELDS = new Set(['last', 'start', 'next']);

/** What may be found at a key holding packed numbers (every kind but the sliding log). */
function packedCorruptions(kind: Exclude<StateKind, 'sliding-log' | 'packed-log'>): Record<string, Corrupt> {
  const fields = PACKED_FIELDS[kind];
  const packed =
    (value: (field: string) => number): Corrupt =>
    (client, key) =>
      client.set(key, packState(fields.map(value)));
  const valid = packState(fields.map((field) => (TIME_FIELDS.has(field) ? NOW : 0)));
  return {
    'a list': (client, key) => client.rpush(key, 'a', 'b'),
    'a hash': (client, key) => client.hset(key, 'last', '1'),
    'a set': (client, key) => client.sadd(key, 'a'),
    'a sorted set': (client, key) => client.zadd(key, 1, 'a'),
    'a garbage string': (client, key) => client.set(key, 'garbage'),
    'an empty string': (client, key) => client.set(key, ''),
    'a truncated packed value': (client, key) => client.set(key, valid.subarray(0, valid.length - 3)),
    'a field too few': (client, key) => client.set(key, valid.subarray(0, valid.length - 8)),
    'a field too many': (client, key) => client.set(key, Buffer.concat([valid, packState([0])])),
    // An older version of sluice stored "<a> <b>" as text: read as none, as any other string.
    "an older version's text": (client, key) =>
      client.set(key, fields.map((field) => (TIME_FIELDS.has(field) ? String(NOW) : '0')).join(' ')),
    'NaN fields': packed(() => NaN),
    'infinite fields': packed((field) => (TIME_FIELDS.has(field) ? Infinity : -Infinity)),
    'negative fields': packed(() => -5),
    ...(kind === 'warm-up'
      ? {} // its fields are fractions
      : { 'fractional fields': packed((field) => (TIME_FIELDS.has(field) ? NOW - 0.5 : 0.5)) }),
    'absurd magnitudes': packed(() => 1e300),
    'a time a year ahead': packed((field) => (TIME_FIELDS.has(field) ? NOW + YEAR_MS : 0)),
    'amounts past the capacity': packed((field) => (TIME_FIELDS.has(field) ? NOW : 1e15)),
  };
}

const LOG_CORRUPTIONS: Record<string, Corrupt> = {
  'a string': (client, key) => client.set(key, 'garbage'),
  'NaN fields': (client, key) => client.set(key, 'nan nan'),
  'a list': (client, key) => client.rpush(key, 'a'),
  'a hash': (client, key) => client.hset(key, 'a', '1'),
  'a set': (client, key) => client.sadd(key, 'a'),
  'an infinite score': (client, key) => client.zadd(key, '+inf', 'x'),
  'an entry a year ahead': (client, key) => client.zadd(key, NOW + YEAR_MS, `${NOW + YEAR_MS}:0`),
  'more live entries than the limit': (client, key) =>
    client.zadd(key, ...Array.from({ length: LOG_LIMIT + 1 }, (_, i) => [NOW - 1, `x${i}`]).flat()),
  // The steps read the newest time from its name (`<time>:<n>`), not its score.
  'a newest member not named by its time': (client, key) => client.zadd(key, NOW - 1, 'x'),
  'a newest member named by a fraction': (client, key) => client.zadd(key, NOW - 1, `${NOW - 1}.5:0`),
};

/** What may be found at a key holding a packed sliding log (a limit of 5): see `packed-log.lua.ts`. */
const PACKED_LOG_CORRUPTIONS: Record<string, Corrupt> = {
  'a list': (client, key) => client.rpush(key, 'a'),
  'a sorted set': (client, key) => client.zadd(key, NOW - 1, `${NOW - 1}:0`),
  'a garbage string': (client, key) => client.set(key, 'garbage'),
  'an empty string': (client, key) => client.set(key, ''),
  'a base and no entry': (client, key) => client.set(key, packLog([]).subarray(0, 8)),
  'a truncated entry': (client, key) => client.set(key, packLog([NOW - 2, NOW - 1]).subarray(0, 14)),
  // An older form of the log: its entries' times as doubles.
  "doubles, as the sorted set's scores": (client, key) => client.set(key, packState([NOW - 2, NOW - 1])),
  'a NaN base': (client, key) => client.set(key, packLog([NOW - 1], NaN)),
  'a negative base': (client, key) => client.set(key, packLog([-5], -5)),
  'a fractional base': (client, key) => client.set(key, packLog([NOW - 0.5], NOW - 0.5)),
  'a newest entry a year ahead': (client, key) => client.set(key, packLog([NOW + YEAR_MS])),
  'the oldest entry after the newest': (client, key) => {
    const bytes = packLog([NOW - 2, NOW - 1]);
    bytes.writeUInt32LE(1, 8);
    bytes.writeUInt32LE(0, 12);
    return client.set(key, bytes);
  },
  'more live entries than the limit': (client, key) =>
    client.set(key, packLog(Array.from({ length: 6 }, (_, i) => NOW - 6 + i))),
  'more entries than two windows hold': (client, key) =>
    client.set(key, packLog(Array.from({ length: 11 }, (_, i) => NOW - 200_000 + i))),
};

const CORRUPTIONS = (kind: StateKind): Record<string, Corrupt> =>
  kind === 'sliding-log'
    ? LOG_CORRUPTIONS
    : kind === 'packed-log'
      ? PACKED_LOG_CORRUPTIONS
      : packedCorruptions(kind);

const CASES = (Object.keys(POLICIES) as StateKind[]).flatMap((kind) =>
  Object.entries(CORRUPTIONS(kind)).map(([name, corrupt]) => [kind, name, corrupt] as const),
);

const redis = useRedisServer();
let client: Redis;
/** A store whose policies run their own scripts (the usual case). */
let own: RedisStore;
/** A store on a client past its cap of policy scripts: every policy runs its kind's shared script. */
let shared: RedisStore;
let sequence = 0;

beforeAll(async () => {
  client = redis.client();
  own = new RedisStore({ client });
  const full = redis.client();
  shared = new RedisStore({ client: full });
  for (let limit = 1; limit <= MAX_POLICY_SCRIPTS; limit++) {
    const policy = resolvePolicy({ algorithm: 'fixed-window', rate: `${limit}/1h` });
    await shared.consume({ prefix: 'fill', key: 'k', policy, cost: 1 });
  }
});

/**
 * Any store error would show as `degraded: 'fail-open'`; the block cache would hide rejections.
 * A timeout of seconds, not the default 50 ms: a loaded machine's slow reply is not an error here.
 */
const UNGUARDED = { onStoreError: 'fail-open', blockCache: false, timeoutMs: 5000 } as const;

/** The key's content, whatever its type: what a comparison with a fresh key's needs. */
async function contentOf(key: string): Promise<unknown> {
  const type = await client.type(key);
  if (type === 'none') return null;
  if (type === 'string') return (await client.getBuffer(key))?.toString('hex');
  if (type === 'zset') return client.zrange(key, 0, -1, 'WITHSCORES');
  return `a ${type}`;
}

/** Decides a user key at `NOW`; resolves what must equal between a corrupt key and a fresh one. */
type Decide = (key: string, cost: number) => Promise<unknown>;

/** Through a limiter: the decision (never degraded) without the field that names the key. */
function byLimiter(limiter: Limiter): Decide {
  return async (key, cost) => {
    const decision: Decision = await limiter.consume(key, { cost });
    expect(decision.degraded).toBeUndefined();
    return { ...decision, key: undefined };
  };
}

/**
 * Corrupts `bad`'s key(s), decides `bad` and a never-seen key at the same time, and expects the
 * same decision and the same content and TTL at both keys afterwards.
 */
async function expectFresh(
  decide: Decide,
  keysOf: (key: string) => string[],
  corrupt: Corrupt,
  cost: number,
): Promise<void> {
  const n = ++sequence;
  const bad = keysOf(`bad-${n}`);
  for (const key of bad) await corrupt(client, key);
  const decision = await decide(`bad-${n}`, cost);
  expect(decision).toEqual(await decide(`fresh-${n}`, cost));
  for (const [i, key] of bad.entries()) {
    const freshKey = keysOf(`fresh-${n}`)[i] as string;
    expect(await contentOf(key)).toEqual(await contentOf(freshKey));
    const [ttl, freshTtl] = [await client.pttl(key), await client.pttl(freshKey)];
    // -2 for both (no key), or both expiring within the same few ms.
    if (freshTtl === -2) expect(ttl).toBe(-2);
    else expect(Math.abs(ttl - freshTtl)).toBeLessThan(100);
  }
}

function singleLimiter(
  kind: StateKind,
  store: RedisStore,
): { decide: Decide; keysOf: (key: string) => string[] } {
  const prefix = `corrupt-${++sequence}`;
  const options = POLICIES[kind];
  const limiter = createLimiter({ ...options, store, prefix, clock: fakeClock(NOW), ...UNGUARDED });
  const policy = resolvePolicy(options);
  expect(stateKindOf(policy)).toBe(kind);
  return { decide: byLimiter(limiter), keysOf: (key) => [store.keyOf({ prefix, key, policy })] };
}

describe.each(CASES)('%s holding %s', (kind, _name, corrupt) => {
  test("an admission: the policy's own script decides as on a fresh key and rewrites it", async () => {
    const { decide, keysOf } = singleLimiter(kind, own);
    await expectFresh(decide, keysOf, corrupt, 1);
  });

  test("an admission: the kind's shared script too", async () => {
    const { decide, keysOf } = singleLimiter(kind, shared);
    await expectFresh(decide, keysOf, corrupt, 1);
  });

  test("a peek (cost 0) and a cost past the capacity: a fresh key's answer, and no state left", async () => {
    const { decide, keysOf } = singleLimiter(kind, own);
    await expectFresh(decide, keysOf, corrupt, 0);
    await expectFresh(decide, keysOf, corrupt, 1000);
  });

  // The store itself: rules cannot be given `warmup`, yet the several-rules script has its step.
  test('several rules (both keys corrupt): decided as on fresh keys, all or nothing', async () => {
    const prefix = `corrupt-${++sequence}`;
    const policies = [
      resolvePolicy(POLICIES[kind]),
      resolvePolicy({ algorithm: 'fixed-window', rate: '100/1m' }),
    ];
    const decide: Decide = (key, cost) => own.consumeRules({ prefix, key, policies, cost, nowMs: NOW });
    const keysOf = (key: string) => own.rulesKeysOf({ prefix, key, policies });
    for (const cost of [1, 0, 1000]) await expectFresh(decide, keysOf, corrupt, cost);
  });
});

const GIVE_BACK_CASES = CASES.filter(([kind]) => givesBack(resolvePolicy(POLICIES[kind])));

describe.each(GIVE_BACK_CASES)('giving back to %s holding %s', (kind, _name, corrupt) => {
  test('nothing to give back, no error, and no state left (as for a fresh key)', async () => {
    const policy = resolvePolicy(POLICIES[kind]);
    const prefix = `corrupt-${++sequence}`;
    const single = own.keyOf({ prefix, key: 'bad', policy });
    const [rule] = own.rulesKeysOf({ prefix, key: 'bad', policies: [policy] });
    for (const key of [single, rule as string]) await corrupt(client, key);
    await own.giveBack({ prefix, key: 'bad', policy, cost: 1, nowMs: NOW });
    await own.giveBackRules({ prefix, key: 'bad', policies: [policy], cost: 1, nowMs: NOW });
    expect(await client.exists(single, rule as string)).toBe(0);
  });
});

describe('a sliding log whose older members have foreign names', () => {
  test("a rejection's wait reads the leaving member's time from its score", async () => {
    const options = POLICIES['sliding-log'];
    const policy = resolvePolicy(options);
    for (const store of [own, shared]) {
      const prefix = `corrupt-${++sequence}`;
      const limiter = createLimiter({ ...options, store, prefix, clock: fakeClock(NOW), ...UNGUARDED });
      const key = store.keyOf({ prefix, key: 'mixed', policy });
      // As many live members as the limit: four not of the log's making, the others of it.
      await client.zadd(
        key,
        NOW - 40,
        'a',
        NOW - 30,
        'b',
        NOW - 20,
        'c',
        NOW - 10,
        'd',
        ...Array.from({ length: LOG_LIMIT - 4 }, (_, i) => [NOW - 1, `${NOW - 1}:${i}`]).flat(),
      );
      const decision = await limiter.consume('mixed');
      expect(decision).toMatchObject({ allowed: false, remaining: 0 });
      // 'a' leaves first: at its time + the window (1 minute).
      expect(decision.retryAfterMs).toBe(60_000 - 40);
      expect(await client.zcard(key)).toBe(LOG_LIMIT);
    }
  });
});
