import type { default as Redis } from 'ioredis';
import { runStep } from '../../src/algorithms';
import { resolvePolicy, type PolicyOptions } from '../../src/policy/resolve-policy';
import { toVerdict } from '../../src/stores/redis/redis-command';
import { policyScript } from '../../src/stores/redis/scripts';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

const redis = useRedisServer();
let client: Redis;
let sequence = 0;

beforeAll(() => {
  client = redis.client();
});

/** Runs the policy's own script for each `[cost, ms after FAKE_EPOCH]` on one fresh key. */
async function replies(options: PolicyOptions, requests: readonly [number, number][]) {
  const policy = resolvePolicy(options);
  const key = `packed-reply-${++sequence}`;
  let state: unknown;
  const out: { reply: unknown; lua: unknown; ts: unknown }[] = [];
  for (const [cost, at] of requests) {
    const now = FAKE_EPOCH + at;
    const reply = await client.eval(policyScript(policy), 1, key, String(cost), String(now));
    const step = runStep(state, policy, now, cost);
    if (step.state !== undefined) state = step.state;
    out.push({ reply, lua: toVerdict(reply, policy), ts: step.verdict });
  }
  return out;
}

describe("a policy's own script's reply", () => {
  test('one integer when the numbers fit: an admission, a rejection (negative: a retry follows)', async () => {
    const out = await replies({ algorithm: 'gcra', rate: '1r/m', burst: 2 }, [
      [1, 0],
      [3, 0],
      [1, 10],
      [4, 20],
    ]);
    expect(out.map(({ reply }) => typeof reply)).toEqual(['number', 'number', 'number', 'number']);
    expect(out[1]?.reply).toBeLessThan(0);
    for (const { lua, ts } of out) expect(lua).toEqual(ts);
  });

  test('the table of four when they do not fit below 2^53, decided the same', async () => {
    // A capacity of 10^8 leaves a retry and its reset too few bits: the table is sent instead.
    const out = await replies({ algorithm: 'fixed-window', rate: { limit: 100_000_000, window: '1h' } }, [
      [100_000_000, 0],
      [1, 5],
    ]);
    expect(typeof out[0]?.reply).toBe('number');
    expect(Array.isArray(out[1]?.reply)).toBe(true);
    for (const { lua, ts } of out) expect(lua).toEqual(ts);
  });

  test('the largest admissions and delays of each kind read back exactly', async () => {
    const cases: [PolicyOptions, [number, number][]][] = [
      [
        { algorithm: 'leaky-bucket', rate: '1r/m', burst: 1_000_000 },
        [
          [5, 0],
          [1_000_000, 1],
          [1, 2],
        ],
      ],
      [
        {
          algorithm: 'token-bucket',
          rate: { limit: 10_000_000, window: '1h' },
          queue: { maxWaitMs: 600_000 },
        },
        [
          [10_000_000, 0],
          [7, 1],
          [1, 2],
        ],
      ],
      [
        { algorithm: 'gcra', rate: '1r/m', queue: { maxWaitMs: 600_000 } },
        [
          [1, 0],
          [1, 1],
          [1, 2],
        ],
      ],
      [
        { algorithm: 'sliding-window', rate: { limit: 3, window: '1d' } },
        [
          [3, 0],
          [1, 86_400_000],
          [1, 86_400_001],
        ],
      ],
    ];
    for (const [options, requests] of cases) {
      for (const { lua, ts } of await replies(options, requests)) expect(lua).toEqual(ts);
    }
  });
});
