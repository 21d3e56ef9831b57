import type Redis from 'ioredis';
import { RedisStore, type Policy, type Verdict } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { commandCalls } from '../harness/script-calls';
import { useRedisServer } from '../harness/redis-fixtures';
import { slackMsOf } from './expiry-check';
import { packState } from './packed-state';

/**
 * A bucket's key (gcra, token bucket, leaky bucket) may outlive its state by a bounded slack
 * (the larger of a second and the time a full bucket takes to refill), so that on the server's
 * clock most admissions keep the key's expiry (`SET … KEEPTTL`) instead of setting one
 * (`PSETEX`): see `expiry.lua.ts`. What that must not cost: a key that expires before its state
 * ends, a key that outlives its state by more than the slack, or a key left without an expiry.
 * A time sent by the caller gets exact expiries, as before (redis-differential checks them).
 */
const redis = useRedisServer();
let client: Redis;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
});

/** A minute's worth of 100: a key's state ends within a minute, and its slack is a minute. */
const BUCKETS: ReadonlyArray<readonly [string, Policy]> = (
  ['gcra', 'token-bucket', 'leaky-bucket'] as const
).map((algorithm) => [algorithm, resolvePolicy({ algorithm, rate: '100/1m' })] as const);

/**
 * Policies whose admissions move the state's end 250 ms further each (no burst, a queue:
 * admissions are delayed, the state's end runs ahead of the clock), so that whether a write keeps
 * the expiry depends on the states alone, not on how fast the machine runs the test. Their slack
 * is a second.
 */
const QUEUED: ReadonlyArray<readonly [string, Policy]> = (['gcra', 'token-bucket'] as const).map(
  (algorithm) =>
    [algorithm, resolvePolicy({ algorithm, rate: '240r/m', queue: { maxWaitMs: 60_000 } })] as const,
);

/** The writes of a bucket's state since the last RESETSTAT: those that set an expiry, those that kept one. */
async function writes(): Promise<{ set: number; kept: number }> {
  const calls = await commandCalls(client);
  return { set: calls.psetex ?? 0, kept: calls.set ?? 0 };
}

/** The key's TTL is no shorter than its state needs and no longer than its slack past that. */
async function expectSlackTtl(key: string, verdict: Verdict, policy: Policy): Promise<void> {
  const ttl = await client.pttl(key);
  // Real time passes between the script and the PTTL; Redis adds a TTL to its own clock, up to
  // 1 ms past the script's TIME (read in whole ms).
  expect(ttl).toBeGreaterThan(verdict.resetMs - 100);
  expect(ttl).toBeLessThanOrEqual(verdict.resetMs + slackMsOf(policy) + 1);
}

describe.each([
  ['batch on', true],
  ['batch: false', false],
] as const)('expiry slack on the server clock (%s)', (_name, batch) => {
  test.each(BUCKETS)(
    '%s: the first admission sets the expiry, the next ones keep it within the slack',
    async (_kind, policy) => {
      const store = new RedisStore({ client, batch });
      const prefix = `slack-${++sequence}`;
      const key = store.keyOf({ prefix, key: 'k', policy });
      const consume = (): Promise<Verdict> => store.consume({ prefix, key: 'k', policy, cost: 1 });

      await client.config('RESETSTAT');
      let verdict = await consume();
      expect(verdict.allowed).toBe(true);
      expect(await writes()).toEqual({ set: 1, kept: 0 });
      await expectSlackTtl(key, verdict, policy);

      await client.config('RESETSTAT');
      for (let i = 0; i < 10; i++) {
        verdict = await consume();
        expect(verdict.allowed).toBe(true);
        await expectSlackTtl(key, verdict, policy);
      }
      expect(await writes()).toEqual({ set: 0, kept: 10 });

      // Ten at once (a batch on one key goes through its view): the expiry still covers the state.
      const together = await Promise.all(Array.from({ length: 10 }, consume));
      expect(together.every((v) => v.allowed)).toBe(true);
      const last = together.reduce((a, b) => (b.resetMs > a.resetMs ? b : a));
      await expectSlackTtl(key, last, policy);
      expect((await writes()).set).toBe(0);
    },
  );

  test.each(QUEUED)(
    '%s: a state that ends past the expiry its key has gets a new one, its end + the slack',
    async (_kind, policy) => {
      const store = new RedisStore({ client, batch });
      const prefix = `slack-${++sequence}`;
      const key = store.keyOf({ prefix, key: 'k', policy });
      const slack = slackMsOf(policy);
      // Each admission moves the state's end 250 ms: the expiry set at the first admission (its
      // end + 1 s) covers 4 more, the 6th sets a new one, which covers 4 more again.
      expect(slack).toBe(1000);
      let setEnd = 0;
      for (let i = 0; i < 30; i++) {
        await client.config('RESETSTAT');
        const verdict = await store.consume({ prefix, key: 'k', policy, cost: 1 });
        expect(verdict.allowed).toBe(true);
        const sets = i % 5 === 0;
        expect([i, await writes()]).toEqual([i, sets ? { set: 1, kept: 0 } : { set: 0, kept: 1 }]);
        if (sets) setEnd = i * 250;
        expect(i * 250 - setEnd).toBeLessThanOrEqual(slack);
        await expectSlackTtl(key, verdict, policy);
      }
    },
  );
});

describe('expiry slack: what a write keeps', () => {
  const [, gcra] = QUEUED[0] as readonly [string, Policy];

  test("a caller's clock gets exact expiries, never kept", async () => {
    const store = new RedisStore({ client });
    const prefix = `slack-${++sequence}`;
    const key = store.keyOf({ prefix, key: 'k', policy: gcra });
    const nowMs = Date.now();
    await client.config('RESETSTAT');
    for (let i = 0; i < 5; i++) {
      const verdict = await store.consume({ prefix, key: 'k', policy: gcra, cost: 1, nowMs });
      const ttl = await client.pttl(key);
      expect(ttl).toBeLessThanOrEqual(verdict.resetMs);
      expect(ttl).toBeGreaterThan(verdict.resetMs - 100);
    }
    expect(await writes()).toEqual({ set: 5, kept: 0 });
  });

  test("a write on the server's clock after one on a caller's sets its own expiry", async () => {
    const store = new RedisStore({ client });
    const prefix = `slack-${++sequence}`;
    const [, policy] = BUCKETS[0] as readonly [string, Policy];
    const key = store.keyOf({ prefix, key: 'k', policy });
    // A caller's clock 10 s ahead: its exact expiry (0.6 s) would cover the next state's end if
    // it were read on the server's clock, where it means 10 s more; the key would then expire
    // 10 s before its state.
    await store.consume({ prefix, key: 'k', policy, cost: 1, nowMs: Date.now() + 10_000 });
    await client.config('RESETSTAT');
    const verdict = await store.consume({ prefix, key: 'k', policy, cost: 1 });
    expect(verdict.resetMs).toBeGreaterThan(10_000);
    expect(await writes()).toEqual({ set: 1, kept: 0 });
    await expectSlackTtl(key, verdict, policy);
  });

  test('a stored expiry further than the slack past the state (a lie, a policy changed) is not kept', async () => {
    const store = new RedisStore({ client });
    const prefix = `slack-${++sequence}`;
    const key = store.keyOf({ prefix, key: 'k', policy: gcra });
    const [seconds] = await client.time();
    const serverMs = Number(seconds) * 1000;
    // A valid gcra state (last, debt, expiry) whose expiry is a year away.
    await client.set(key, packState([serverMs, 0, serverMs + 365 * 86_400_000]), 'PX', 3_600_000);
    await client.config('RESETSTAT');
    const verdict = await store.consume({ prefix, key: 'k', policy: gcra, cost: 1 });
    expect(await writes()).toEqual({ set: 1, kept: 0 });
    await expectSlackTtl(key, verdict, gcra);
  });

  test('a key left without an expiry gets one back once its state ends past the one it had', async () => {
    const store = new RedisStore({ client });
    const prefix = `slack-${++sequence}`;
    const key = store.keyOf({ prefix, key: 'k', policy: gcra });
    await store.consume({ prefix, key: 'k', policy: gcra, cost: 1 });
    await client.persist(key);
    let verdict: Verdict | undefined;
    for (let i = 0; i < 17 && (await client.pttl(key)) === -1; i++)
      verdict = await store.consume({ prefix, key: 'k', policy: gcra, cost: 1 });
    await expectSlackTtl(key, verdict as Verdict, gcra);
  });

  test('keys admitted together (one state text) each keep an expiry that covers their state', async () => {
    const store = new RedisStore({ client });
    const prefix = `slack-${++sequence}`;
    const policy = resolvePolicy({ algorithm: 'gcra', rate: '100/1m' });
    const keys = Array.from({ length: 40 }, (_, i) => `u${i}`);
    for (let round = 0; round < 3; round++) {
      const verdicts = await Promise.all(
        keys.map((key) => store.consume({ prefix, key, policy, cost: 1 + round })),
      );
      for (const [i, key] of keys.entries())
        await expectSlackTtl(store.keyOf({ prefix, key, policy }), verdicts[i] as Verdict, policy);
    }
  });
});
