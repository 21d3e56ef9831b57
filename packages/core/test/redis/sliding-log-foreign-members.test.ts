import type Redis from 'ioredis';
import { createLimiter, RedisStore, type Decision, type LimiterEvents } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { FAKE_EPOCH, fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

// Every log here is a sorted set, whatever its limit (a limit up to PACKED_LOG_MAX is otherwise
// kept as one string: redis-packed-log.test.ts): the sorted set's Lua is the same at any limit.
jest.mock('../../src/stores/redis/scripts/packed-log.lua', () => ({
  ...jest.requireActual<object>('../../src/stores/redis/scripts/packed-log.lua'),
  PACKED_LOG_MAX: 0,
}));

/**
 * The sliding log reads its newest time from the top member's name and a leaving entry's time
 * from its name too (see `sliding-log.lua.ts`). A member whose name and score disagree, or whose
 * name holds a number the log never wrote, is bad state like any other: the key is decided
 * exactly as a fresh key and rewritten, no store error, and the other keys of the same batch are
 * decided by Redis as usual. (Found by an audit: a `1:0` scored `+inf` turned the limit off for
 * good; a leaving `-5:0` gave a negative wait, which failed the whole batch as a store error.)
 */
const NOW = FAKE_EPOCH + 123_456;
const WINDOW_MS = 60_000;
const OPTIONS = { algorithm: 'sliding-log', rate: '5/1m' } as const;
const policy = resolvePolicy(OPTIONS);

/** Any store error would show as `degraded: 'fail-open'`; the block cache would hide rejections. */
const UNGUARDED = { onStoreError: 'fail-open', blockCache: false, timeoutMs: 5000 } as const;

type Plant = (client: Redis, key: string) => Promise<unknown>;

/** Members `<time>:<n>` scored `score`, for n from 0. */
function named(time: number, count: number, score: number | string): (number | string)[] {
  return Array.from({ length: count }, (_, n) => [score, `${time}:${n}`]).flat();
}

/** A log found idle by its top member's name, whose score says otherwise. */
const IDLE_BY_NAME: Record<string, Plant> = {
  "'1:0' scored +inf": (client, key) => client.zadd(key, '+inf', '1:0'),
  "'1:0' scored 5 s ahead": (client, key) => client.zadd(key, NOW + 5000, '1:0'),
  "'1:0' scored 100 ms ago": (client, key) => client.zadd(key, NOW - 100, '1:0'),
  "'-5:0' scored now": (client, key) => client.zadd(key, NOW, '-5:0'),
};

/**
 * A log at its limit by its top member, whose oldest live entry has neither a name nor a score
 * of the log's time line: the wait it would tell is not a time.
 */
const LEAVING_FOREIGN: Record<string, Plant> = {
  "'-1:0' to '-4:0' and a newest named now, all scored +inf": (client, key) =>
    client.zadd(key, ...[1, 2, 3, 4].flatMap((n) => ['+inf', `-${n}:0`]), '+inf', `${NOW}:0`),
  "'!x' and four named now, all scored +inf": (client, key) =>
    client.zadd(key, '+inf', '!x', ...named(NOW, 4, '+inf')),
};

const CASES = Object.entries({ ...IDLE_BY_NAME, ...LEAVING_FOREIGN });

const redis = useRedisServer();
let client: Redis;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
});

/** The key's members with their scores, sorted by score: what a fresh key's must equal. */
function contentOf(key: string): Promise<string[]> {
  return client.zrange(key, 0, -1, 'WITHSCORES');
}

/** A limiter of its own prefix at `NOW`, and every store error it reports. */
function limiterOn(batch: boolean) {
  const store = new RedisStore({ client, batch });
  const prefix = `foreign-${++sequence}`;
  const limiter = createLimiter({ ...OPTIONS, store, prefix, clock: fakeClock(NOW), ...UNGUARDED });
  const errors: LimiterEvents['storeError'][] = [];
  limiter.on('storeError', (event) => errors.push(event));
  const keyOf = (key: string): string => store.keyOf({ prefix, key, policy });
  return { limiter, errors, keyOf };
}

const withoutKey = (decisions: readonly Decision[]): Decision[] => decisions.map((d) => ({ ...d, key: '' }));
const admitted = (decisions: readonly Decision[]): number => decisions.filter((d) => d.allowed).length;

/** The store errors in short: whose, of which scope, and the start of the message. */
const brief = (errors: LimiterEvents['storeError'][]): string[] =>
  errors.map(({ key, scope, error }) => `${key} (${scope}): ${error.message.slice(0, 80)}`);

describe.each([
  ['batch on', true],
  ['batch: false', false],
] as const)('a sliding log with foreign members (%s)', (_name, batch) => {
  test.each(CASES)(
    '%s: the key is decided as a fresh one, and a key beside it in the same calls exactly',
    async (_case, plant) => {
      const { limiter, errors, keyOf } = limiterOn(batch);
      for (let i = 0; i < 4; i++) expect((await limiter.consume('good')).allowed).toBe(true);
      await plant(client, keyOf('victim'));
      // Interleaved, so that with batching each call holds requests of all three keys.
      const victim: Promise<Decision>[] = [];
      const fresh: Promise<Decision>[] = [];
      const good: Promise<Decision>[] = [];
      for (let i = 0; i < 20; i++) {
        victim.push(limiter.consume('victim'));
        fresh.push(limiter.consume('fresh'));
        if (i < 10) good.push(limiter.consume('good'));
      }
      const [victims, freshes, goods] = await Promise.all([
        Promise.all(victim),
        Promise.all(fresh),
        Promise.all(good),
      ]);
      expect(brief(errors)).toEqual([]);
      for (const decision of [victims, freshes, goods].flat()) expect(decision.degraded).toBeUndefined();
      expect(admitted(victims)).toBe(5);
      expect(withoutKey(victims)).toEqual(withoutKey(freshes));
      // 4 taken before: 1 more.
      expect(admitted(goods)).toBe(1);
      expect(await contentOf(keyOf('victim'))).toEqual(await contentOf(keyOf('fresh')));
      const [ttl, freshTtl] = [await client.pttl(keyOf('victim')), await client.pttl(keyOf('fresh'))];
      expect(Math.abs(ttl - freshTtl)).toBeLessThan(100);
    },
  );

  test.each([
    ["'-5:0'", '-5:0', WINDOW_MS],
    ["'1:0' scored 100 ms ago", '1:0', WINDOW_MS - 100],
  ] as const)(
    'a log at its limit whose oldest member is named %s: its wait read from its score, no store error',
    async (_case, name, retryAfterMs) => {
      const { limiter, errors, keyOf } = limiterOn(batch);
      const key = keyOf('at-limit');
      await client.zadd(key, NOW - (WINDOW_MS - retryAfterMs), name, ...named(NOW, 4, NOW));
      const decisions = await Promise.all(Array.from({ length: 4 }, () => limiter.consume('at-limit')));
      expect(brief(errors)).toEqual([]);
      for (const decision of decisions)
        expect(decision).toMatchObject({ allowed: false, remaining: 0, retryAfterMs, degraded: undefined });
      expect(await client.zcard(key)).toBe(5);
      // The other keys are Redis's to decide: the circuit stayed closed.
      expect(await limiter.consume('other')).toMatchObject({ allowed: true, degraded: undefined });
    },
  );
});
