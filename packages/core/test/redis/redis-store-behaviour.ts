import type { Cluster, default as Redis } from 'ioredis';
import {
  ALGORITHMS,
  RedisStore,
  type AlgorithmName,
  type Policy,
  type PolicyOptions,
  type RedisStoreClient,
  type Verdict,
} from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { KEY_NAMES, stateKindOf } from '../../src/stores/redis/scripts';
import { PACKED_LOG_MAX } from '../../src/stores/redis/scripts/packed-log.lua';
import { storedNumbers, unpackLog } from './packed-state';
import { expectLogExpiry, slackMsOf } from './expiry-check';

/** Where the store runs: its client (a Redis or a Cluster) and a plain client per master. */
export interface RedisTarget {
  /** The client the store is built on; reads through it are routed as the store's commands are. */
  client(): Redis | Cluster;
  /** One client per master node, for SCAN, SCRIPT FLUSH, INFO and TIME. */
  masters(): Redis[];
  /**
   * The client the store is built on when it is not `client()` (node-redis, iovalkey): the
   * suites then read through `client()`, an ioredis client to the same deployment.
   */
  storeClient?(): RedisStoreClient;
}

/** The client a target's stores are built on. */
export function storeClientOf(target: RedisTarget): RedisStoreClient {
  return target.storeClient?.() ?? target.client();
}

/** Key texts chosen to break naive key building. */
export const HOSTILE_KEYS: readonly string[] = [
  '',
  ' ',
  '{',
  '}',
  '{}',
  '}{',
  '{x}',
  'x',
  '{{x}}',
  '%',
  '%7B',
  '%25',
  '%u',
  '%h',
  ':',
  'a:b',
  '}:gcra',
  'sluice:{x}:gcra',
  '\r\n',
  'a\r\nSET x y\r\n',
  '\u0000',
  '*',
  '?',
  '[a]',
  '\\',
  '\uD800',
  '\uDC00',
  '\uFFFD',
  '\uD83D\uDD25',
  'x'.repeat(256),
  'x'.repeat(257),
  'x'.repeat(10_000),
  '{'.repeat(10_000),
];

/**
 * Every key of this layout: `<namespace>:{<escaped key>}:<algorithm>`, one brace pair, then an
 * override's scope and a rule's index when there are any.
 */
const LAYOUT = new RegExp(`^[^{}]+:\\{[^{}]+\\}:(${Object.values(KEY_NAMES).join('|')})(:[^{}:]+)?(:\\d+)?$`);

const policyOf = (algorithm: AlgorithmName, rate: string, extra: Partial<PolicyOptions> = {}): Policy =>
  resolvePolicy({ algorithm, rate, ...extra });

let prefixes = 0;

/** Every key in the target under `prefix` (all keys when undefined), found with SCAN on every master. */
export async function scanKeys(target: RedisTarget, prefix: string | undefined): Promise<string[]> {
  const keys: string[] = [];
  for (const master of target.masters()) {
    let cursor = '0';
    for (let page = 0; page < 10_000; page++) {
      const [next, batch] = await master.scan(cursor, 'COUNT', 1000);
      keys.push(...(prefix === undefined ? batch : batch.filter((key) => key.startsWith(`${prefix}:`))));
      cursor = next;
      if (cursor === '0') break;
    }
  }
  return keys;
}

/** Sum of one field over the script commands (eval, evalsha) in INFO commandstats of every master. */
async function scriptCalls(target: RedisTarget): Promise<{ eval: number; evalsha: number }> {
  const total = { eval: 0, evalsha: 0 };
  for (const master of target.masters()) {
    const info = await master.info('commandstats');
    for (const name of ['eval', 'evalsha'] as const) {
      const line = new RegExp(`^cmdstat_${name}:calls=(\\d+),.*rejected_calls=(\\d+)`, 'm').exec(info);
      if (line) total[name] += Number(line[1]) + Number(line[2]);
    }
  }
  return total;
}

/**
 * What RedisStore guarantees beyond the store contract, on any Redis deployment: key layout,
 * TTLs, the server clock, NOSCRIPT recovery, errors, hostile keys, the sliding log's members.
 */
export function describeRedisStoreBehaviour(name: string, target: RedisTarget): void {
  describe(`RedisStore behaviour: ${name}`, () => {
    let store: RedisStore;
    let prefix: string;
    beforeEach(() => {
      store = new RedisStore({ client: storeClientOf(target) });
      prefix = `behaviour-${++prefixes}`;
    });
    const consume = (policy: Policy, key: string, cost = 1, nowMs?: number): Promise<Verdict> =>
      store.consume({ prefix, key, policy, cost, nowMs });

    test('one key per decision, named <prefix>:{<key>}:<algorithm>[@<format>]', async () => {
      const policies = ALGORITHMS.map((algorithm) => policyOf(algorithm, '5/1m'));
      for (const policy of policies) await consume(policy, 'user:42');
      const keys = await scanKeys(target, prefix);
      expect(keys.sort()).toEqual(
        policies.map((policy) => `${prefix}:{user:42}:${KEY_NAMES[stateKindOf(policy)]}`).sort(),
      );
    });

    test.each(ALGORITHMS)(
      '%s: every write leaves a TTL no shorter than the state needs and no longer than its slack past it (the windows: theirs; the sliding log: to the end of the next span), rejections keep it',
      async (algorithm) => {
        const policy = policyOf(
          algorithm,
          '5/1s',
          algorithm === 'leaky-bucket' ? { burst: 4, delay: 1 } : {},
        );
        const client = target.client();
        for (let i = 0; i < 40; i++) {
          const key = `k${i % 3}`;
          const verdict = await consume(policy, key, i % 7 === 0 ? 0 : 1 + (i % 3));
          const ttl = await client.pttl(store.keyOf({ prefix, key, policy }));
          if (verdict.allowed && i % 7 !== 0 && algorithm === 'sliding-log') {
            // Set by the first admission of each second-long span, to the end of the next one.
            expectLogExpiry(ttl, verdict.resetMs, 1000);
          } else if (verdict.allowed && i % 7 !== 0) {
            // The step's ttlMs is its resetMs here; a few ms of real time pass before PTTL. A
            // window's admission keeps the expiry its window's first one set, a bucket's the one
            // set at most its slack past its state's end: Redis added that TTL to its own clock,
            // up to 1 ms past the script's TIME (read in whole ms).
            expect(ttl).toBeLessThanOrEqual(verdict.resetMs + slackMsOf(policy) + 1);
            expect(ttl).toBeGreaterThan(verdict.resetMs - 100);
          } else {
            expect(ttl === -2 || (ttl > 0 && ttl <= 2000)).toBe(true);
          }
        }
        const keys = await scanKeys(target, prefix);
        expect(keys).toHaveLength(3);
        for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(0);
      },
    );

    test('decides on the server TIME when the request has no time, on the given time otherwise', async () => {
      const policy = policyOf('fixed-window', '5/1h');
      const serverMs = async (): Promise<number[]> =>
        Promise.all(
          target
            .masters()
            .map(async (m) => m.time().then(([s, us]) => Number(s) * 1000 + Math.floor(Number(us) / 1000))),
        );
      const before = Math.min(...(await serverMs()));
      await consume(policy, 'server-clock');
      const after = Math.max(...(await serverMs()));
      // fixed-window packs its window's start and its count.
      const [start] = (await storedNumbers(
        target.client(),
        store.keyOf({ prefix, key: 'server-clock', policy }),
      )) ?? [NaN];
      expect(start).toBeGreaterThanOrEqual(before);
      expect(start).toBeLessThanOrEqual(after);

      await consume(policy, 'given-clock', 1, 1_234_567);
      expect(
        await storedNumbers(target.client(), store.keyOf({ prefix, key: 'given-clock', policy })),
      ).toEqual([1_234_567, 1]);
    });

    test('SCRIPT FLUSH in the middle of a run fails no request: the script is sent again on NOSCRIPT', async () => {
      // 50 per hour on the server clock: nothing refills during the run, so counts are exact.
      const policies = ALGORITHMS.map((algorithm) => policyOf(algorithm, '50/1h'));
      const admitted = policies.map(() => 0);
      const errors: unknown[] = [];
      for (let round = 0; round < 100; round++) {
        if (round === 50) {
          for (const master of target.masters()) {
            await master.config('RESETSTAT');
            await master.script('FLUSH');
          }
        }
        const results = await Promise.allSettled(policies.map((policy) => consume(policy, 'flushed')));
        results.forEach((result, i) => {
          if (result.status === 'rejected') errors.push(result.reason);
          else if (result.value.allowed) admitted[i] = (admitted[i] as number) + 1;
        });
      }
      expect(errors).toEqual([]);
      expect(admitted).toEqual(policies.map(() => 50));
      // Each call that met NOSCRIPT sent its script again, once: one per batch (see batching.test.ts).
      expect((await scriptCalls(target)).eval).toBeGreaterThanOrEqual(1);
    });

    test('any other error rejects the promise, and nothing is retried', async () => {
      const policy = policyOf('gcra', '5/1m');
      // Load the script on that node first (same hash tag, so same node): an earlier SCRIPT
      // FLUSH would otherwise add a legitimate NOSCRIPT round.
      await store.consume({ prefix: `${prefix}-warm`, key: 'full', policy, cost: 1 });
      // A server out of memory refuses the script's write (a key's bad data no longer errors:
      // the scripts read it as no state, see redis-corrupt-state.test.ts).
      const masters = target.masters();
      try {
        for (const master of masters) {
          await master.config('RESETSTAT');
          await master.config('SET', 'maxmemory', '1');
        }
        await expect(consume(policy, 'full')).rejects.toThrow(/^OOM/);
      } finally {
        for (const master of masters) await master.config('SET', 'maxmemory', '0');
      }
      const calls = await scriptCalls(target);
      expect(calls.eval + calls.evalsha).toBe(1);
    });

    test('hostile key text never errors, never collides and stays under the prefix, with a TTL', async () => {
      const policy = policyOf('gcra', '2/1h');
      for (const key of HOSTILE_KEYS) {
        expect([await consume(policy, key), await consume(policy, key)].every((v) => v.allowed)).toBe(true);
      }
      for (const key of HOSTILE_KEYS) expect((await consume(policy, key)).allowed).toBe(false);
      const keys = await scanKeys(target, prefix);
      expect(keys).toHaveLength(HOSTILE_KEYS.length);
      for (const key of keys) {
        expect(key).toMatch(LAYOUT);
        expect(key.length).toBeLessThan(400);
        expect(await target.client().pttl(key)).toBeGreaterThan(0);
      }
    });

    test.each(ALGORITHMS)('%s: reset deletes the key', async (algorithm) => {
      const policy = policyOf(algorithm, '5/1m');
      await consume(policy, 'gone');
      const key = store.keyOf({ prefix, key: 'gone', policy });
      expect(await target.client().exists(key)).toBe(1);
      await store.reset({ prefix, key: 'gone', policy });
      expect(await target.client().exists(key)).toBe(0);
    });

    test('algorithms never read each other state', async () => {
      await consume(policyOf('gcra', '1/1m'), 'shared');
      expect((await consume(policyOf('gcra', '1/1m'), 'shared')).allowed).toBe(false);
      expect((await consume(policyOf('fixed-window', '1/1m'), 'shared')).allowed).toBe(true);
    });

    test.each([
      ['as one string', 10],
      ['as a sorted set', PACKED_LOG_MAX + 10],
    ])(
      'sliding-log %s: ten requests in one millisecond are ten entries; a rejection is not recorded',
      async (_form, limit) => {
        const policy = policyOf('sliding-log', `${limit}/1m`);
        const key = store.keyOf({ prefix, key: 'same-ms', policy });
        const at = 1_700_006_400_123;
        if (limit > 10) await consume(policy, 'same-ms', limit - 10, at - 1);
        const verdicts = await Promise.all(
          Array.from({ length: 12 }, () => consume(policy, 'same-ms', 1, at)),
        );
        expect(verdicts.filter((v) => v.allowed)).toHaveLength(10);
        const client = target.client();
        if (limit > PACKED_LOG_MAX) {
          const members = await client.zrangebyscore(key, at, at);
          expect(members.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `${at}:${i}`).sort());
        } else {
          expect(unpackLog((await client.getBuffer(key)) as Buffer)).toEqual(
            Array.from({ length: 10 }, () => at),
          );
        }
      },
    );

    test('sliding-log: a cost of thousands is logged in full (batched ZADD)', async () => {
      const policy = policyOf('sliding-log', '5000/1m');
      const key = store.keyOf({ prefix, key: 'big', policy });
      const at = 1_700_006_400_000;
      expect((await consume(policy, 'big', 2500, at)).allowed).toBe(true);
      expect((await consume(policy, 'big', 2500, at)).remaining).toBe(0);
      expect((await consume(policy, 'big', 1, at)).allowed).toBe(false);
      expect(await target.client().zcard(key)).toBe(5000);
    });

    // Last: sweeps what every earlier test of the file (the store contract included) left behind.
    test('no key in this Redis lacks a TTL, and every key has the sluice layout', async () => {
      const keys = await scanKeys(target, undefined);
      expect(keys.length).toBeGreaterThan(HOSTILE_KEYS.length);
      const client = target.client();
      const ttls = await Promise.all(keys.map((key) => client.pttl(key)));
      expect(keys.filter((key, i) => ttls[i] === -1 || !LAYOUT.test(key))).toEqual([]);
    });
  });
}
