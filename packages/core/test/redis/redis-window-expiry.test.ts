import type Redis from 'ioredis';
import { RedisStore, type Policy } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { commandCalls } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';

/**
 * A window's state needs one expiry for the whole window (the fixed window's end; two windows
 * after the sliding window's start), so on Redis the admission that opens a window sets it
 * (`PSETEX`) and the window's other admissions keep it (`SET … KEEPTTL`, about half the cost):
 * see `KEEP_TTL` in `prelude.lua.ts`. What that must not cost: a key that expires while its
 * window still counts, or a key left without an expiry. (That every decision and TTL equals the
 * reference's is redis-differential's.)
 */
const redis = useRedisServer();
let client: Redis;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
});

const WINDOW_MS = 60_000;
const POLICIES: ReadonlyArray<readonly [string, Policy, number]> = [
  // [name, policy, how long after its window's start the state needs the key]
  ['fixed-window', resolvePolicy({ algorithm: 'fixed-window', rate: { limit: 1000, window: WINDOW_MS } }), 1],
  [
    'sliding-window',
    resolvePolicy({ algorithm: 'sliding-window', rate: { limit: 1000, window: WINDOW_MS } }),
    2,
  ],
];

describe.each([
  ['batch on', true],
  ['batch: false', false],
] as const)('window expiry on Redis (%s)', (_name, batch) => {
  test.each(POLICIES)(
    "%s: the window's first admission sets the expiry, the others keep it",
    async (_kind, policy, windows) => {
      const store = new RedisStore({ client, batch });
      const prefix = `window-${++sequence}`;
      const key = store.keyOf({ prefix, key: 'k', policy });
      // Sliding windows start at multiples of the window; a fixed window at its first admission.
      const start = FAKE_EPOCH - (FAKE_EPOCH % WINDOW_MS) + 10 * WINDOW_MS;
      const consume = (nowMs: number, cost = 1) => store.consume({ prefix, key: 'k', policy, cost, nowMs });

      await client.config('RESETSTAT');
      expect((await consume(start)).allowed).toBe(true);
      let calls = await commandCalls(client);
      expect([calls.psetex, calls.set]).toEqual([1, undefined]);
      const needed = windows * WINDOW_MS;
      expect(await client.pttl(key)).toBeGreaterThan(needed - 1000);

      // One at a time, then 30 at once (a batch on one key goes through its view): all kept.
      await client.config('RESETSTAT');
      for (let i = 1; i <= 10; i++) expect((await consume(start + 1000 * i)).allowed).toBe(true);
      const together = await Promise.all(Array.from({ length: 30 }, () => consume(start + 20_000)));
      expect(together.every((verdict) => verdict.allowed)).toBe(true);
      calls = await commandCalls(client);
      expect(calls.psetex).toBeUndefined();
      expect(calls.set).toBeGreaterThanOrEqual(11);
      // Kept from the first admission: still the window's end, not 20 s less.
      const ttl = await client.pttl(key);
      expect(ttl).toBeGreaterThan(needed - 1000);
      expect(ttl).toBeLessThanOrEqual(needed);
      expect((await consume(start + 20_000, 0)).remaining).toBe(1000 - 41);

      // The next window (the fixed window: once this one has closed) sets its own expiry.
      await client.config('RESETSTAT');
      expect((await consume(start + WINDOW_MS + 5)).allowed).toBe(true);
      calls = await commandCalls(client);
      expect([calls.psetex, calls.set]).toEqual([1, undefined]);
      expect(await client.pttl(key)).toBeGreaterThan(needed - 1000 - 5);
    },
  );

  test.each(POLICIES)(
    '%s: a state whose window has not counted yet is written with its expiry, never kept',
    async (_kind, policy) => {
      const store = new RedisStore({ client, batch });
      const prefix = `window-${++sequence}`;
      const key = store.keyOf({ prefix, key: 'k', policy });
      const start = FAKE_EPOCH - (FAKE_EPOCH % WINDOW_MS) + 20 * WINDOW_MS;
      // A window's state without an expiry (left by hand): the first admission of a later window
      // gives it one.
      await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs: start });
      await client.persist(key);
      await client.config('RESETSTAT');
      await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs: start + 2 * WINDOW_MS + 1 });
      const calls = await commandCalls(client);
      expect([calls.psetex, calls.set]).toEqual([1, undefined]);
      expect(await client.pttl(key)).toBeGreaterThan(0);
    },
  );
});
