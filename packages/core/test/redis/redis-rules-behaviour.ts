import {
  createLimiter,
  RedisStore,
  type Limiter,
  type LimiterOptions,
  type LimiterRulesOptions,
  type Policy,
} from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { HOSTILE_KEYS, scanKeys, storeClientOf, type RedisTarget } from './redis-store-behaviour';
import { scriptCalls } from '../harness/script-calls';
import { storedNumbers } from './packed-state';
import { expectLogExpiry, slackMsOf } from './expiry-check';

let prefixes = 0;

/**
 * What RedisStore guarantees for several rules on any deployment: one script call per decision,
 * one key per rule under the user key's hash tag (one slot), each with its own TTL, and nothing
 * written by a rejection.
 */
export function describeRedisRulesBehaviour(name: string, target: RedisTarget): void {
  describe(`RedisStore with several rules: ${name}`, () => {
    let store: RedisStore;
    let prefix: string;
    beforeEach(() => {
      store = new RedisStore({ client: storeClientOf(target) });
      prefix = `rules-behaviour-${++prefixes}`;
    });
    const make = (
      options: Omit<LimiterOptions, 'store' | 'prefix'> | Omit<LimiterRulesOptions, 'store' | 'prefix'>,
    ): Limiter =>
      createLimiter({ store, prefix, onStoreError: 'fail-closed', timeoutMs: 10_000, ...options });

    test('one script call per decision; one key per rule, <prefix>:{<key>}:<algorithm>:<index>, each with its own TTL', async () => {
      const limiter = make({
        rules: [
          { rate: '5/1s' },
          { rate: '100/1h', algorithm: 'fixed-window' },
          { rate: '7/1m', algorithm: 'sliding-log' },
        ],
      });
      const before = await scriptCalls(...target.masters());
      const decision = await limiter.consume('user:42');
      expect(await scriptCalls(...target.masters())).toBe(before + 1);
      const keys = await scanKeys(target, prefix);
      expect(keys.sort()).toEqual([
        `${prefix}:{user:42}:fixed-window:1`,
        `${prefix}:{user:42}:gcra@2:0`,
        `${prefix}:{user:42}:sliding-log@2:2`,
      ]);
      const client = target.client();
      // Each TTL is its own rule's reset, less the few ms since (the sliding log's: the end of
      // the minute after this one; gcra's: up to its slack past it).
      for (const [i, key] of store
        .rulesKeysOf({ prefix, key: 'user:42', policies: limiter.policies })
        .entries()) {
        const ttl = await client.pttl(key);
        const resetMs = decision.limits?.[i]?.resetMs as number;
        if (i === 2) {
          expectLogExpiry(ttl, resetMs, 60_000);
          continue;
        }
        expect(ttl).toBeLessThanOrEqual(resetMs + slackMsOf(limiter.policies[i] as Policy));
        expect(ttl).toBeGreaterThan(resetMs - 100);
      }
    });

    test('5/s and 7/min, 20 requests at once: exactly 5 pass and the per-minute counter holds 5', async () => {
      const clock = fakeClock();
      const limiter = make({ algorithm: 'fixed-window', rate: ['5/1s', '7/1m'], clock });
      const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.consume('sku:1001')));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
      const [, perMinute] = store.rulesKeysOf({ prefix, key: 'sku:1001', policies: limiter.policies });
      // fixed-window packs its window's start and its count.
      expect(await storedNumbers(target.client(), perMinute as string)).toEqual([clock(), 5]);
    });

    test('a rejection by one rule writes nothing at all, TTLs included', async () => {
      const limiter = make({ rate: ['2/1h', '100/1h'] });
      await limiter.consume('k');
      await limiter.consume('k');
      const keys = store.rulesKeysOf({ prefix, key: 'k', policies: limiter.policies });
      const client = target.client();
      // A TTL far above what the rule needs: any write would bring it down to the rule's reset.
      await client.pexpire(keys[1] as string, 5_000_000);
      const values = await Promise.all(keys.map((key) => client.getBuffer(key)));
      expect((await limiter.consume('k')).allowed).toBe(false);
      expect(await Promise.all(keys.map((key) => client.getBuffer(key)))).toEqual(values);
      expect(await client.pttl(keys[1] as string)).toBeGreaterThan(4_900_000);
    });

    test('hostile key text: every rule of a key in one slot, never CROSSSLOT', async () => {
      const limiter = make({ rate: ['2/1h', '3/1h'] });
      for (const key of HOSTILE_KEYS) {
        expect((await limiter.consume(key)).allowed).toBe(true);
        const keys = store.rulesKeysOf({ prefix, key, policies: limiter.policies });
        expect(keys[1]?.replace(/:gcra@2:1$/, '')).toBe(keys[0]?.replace(/:gcra@2:0$/, ''));
      }
      for (const key of HOSTILE_KEYS) expect((await limiter.consume(key)).allowed).toBe(true);
      for (const key of HOSTILE_KEYS) expect((await limiter.consume(key)).allowed).toBe(false);
      expect(await scanKeys(target, prefix)).toHaveLength(2 * HOSTILE_KEYS.length);
    });

    test('SCRIPT FLUSH: the several-rules script is sent again on NOSCRIPT, no request fails', async () => {
      const limiter = make({ rate: ['50/1h', '60/1h'] });
      let admitted = 0;
      for (let i = 0; i < 60; i++) {
        if (i === 30) for (const master of target.masters()) await master.script('FLUSH');
        if ((await limiter.consume('flushed')).allowed) admitted++;
      }
      expect(admitted).toBe(50);
    });

    test('reset deletes every rule key', async () => {
      const limiter = make({ rate: ['1/1h', '2/1h'] });
      await limiter.consume('gone');
      expect(await scanKeys(target, prefix)).toHaveLength(2);
      await limiter.reset('gone');
      expect(await scanKeys(target, prefix)).toHaveLength(0);
      expect((await limiter.consume('gone')).allowed).toBe(true);
    });
  });
}
