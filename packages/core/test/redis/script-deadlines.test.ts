import type Redis from 'ioredis';
import type { Policy } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { batchPolicyArgs } from '../../src/stores/redis/batch-call';
import {
  BATCH_SCRIPT,
  JOINT_SCRIPT,
  LUA_SCRIPTS,
  MAX_PARAMS,
  MULTI_SCRIPT,
  policyParams,
  policyScript,
} from '../../src/stores/redis/scripts';
import { policyScriptArgs, scriptArgs } from '../../src/stores/redis/redis-command';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { storedNumbers } from './packed-state';
import { useRedisServer } from '../harness/redis-fixtures';

/**
 * A request may carry its deadline on the Redis server's clock: `-<deadline>` where `now` is sent
 * (the server's time), or `<now>@<deadline>`. Past it, the script decides and writes nothing and
 * answers `SLUICE_LATE` (the batch script: in each of the run's places); before it, it decides
 * as ever. A request whose caller has already decided without Redis is then not charged here.
 */
const redis = useRedisServer();
let client: Redis;
let keys = 0;

beforeAll(() => {
  client = redis.client();
});

const policy: Policy = resolvePolicy({ algorithm: 'gcra', rate: '10/1m' });
const LATE = /^SLUICE_LATE /;

/** The server's epoch ms, as the scripts read it. */
async function serverMs(): Promise<number> {
  const [seconds, micros] = (await client.time()) as [string | number, string | number];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** `'decided'` when a script call answers, else its error's message. */
async function answer(call: Promise<unknown>): Promise<string> {
  return call.then(
    () => 'decided',
    (error: Error) => error.message,
  );
}

const newKey = (): string => `deadline:{k${++keys}}:gcra`;

/** A request on `key` at `now` (its time argument as sent) through each script that takes units. */
type Run = (key: string, now: string) => Promise<unknown>;

const ALONE: ReadonlyArray<readonly [string, Run]> = [
  ['a policy of its own', (key, now) => client.eval(policyScript(policy), 1, key, '1', now)],
  [
    'the shared single-rule script',
    (key, now) =>
      client.eval(LUA_SCRIPTS.gcra, 1, key, ...scriptArgs({ policy, cost: 1, nowMs: 0 }).slice(0, -1), now),
  ],
  [
    'the several-rules script',
    (key, now) => client.eval(MULTI_SCRIPT, 1, key, now, '1', ...kindAndParams(policy)),
  ],
  [
    'the joint script',
    (key, now) => client.eval(JOINT_SCRIPT, 1, key, now, '1', '1', '1', '', '0', ...kindAndParams(policy)),
  ],
];

/** The batch script's paths, each with one request of a run whose time is `now`. */
const BATCHED: ReadonlyArray<readonly [string, Run]> = [
  [
    'the batch script, a one-key run',
    (key, now) =>
      client.eval(BATCH_SCRIPT, 1, key, '1', ...batchPolicyArgs(policy), '1', '1', '1', '1', now, '1'),
  ],
  [
    'the batch script, a consume on two keys',
    (key, now) =>
      client.eval(
        BATCH_SCRIPT,
        2,
        key,
        `${key}:2`,
        '1',
        ...batchPolicyArgs(policy),
        '1',
        '1',
        '2',
        '1',
        now,
        '1',
        '1',
      ),
  ],
  [
    'the batch script, a joint decision (its parts as shared values)',
    (key, now) =>
      client.eval(BATCH_SCRIPT, 1, key, '0', ...['1', '4', '1', '0', now], ...withCount(jointShared())),
  ],
];

describe.each(ALONE)('%s', (_name, run) => {
  test('past its deadline: SLUICE_LATE, nothing written; before it: decided as ever', async () => {
    const now = await serverMs();
    for (const sent of [`-${now - 1}`, `${FAKE_EPOCH}@${now - 1}`]) {
      const key = newKey();
      expect(await answer(run(key, sent))).toMatch(LATE);
      expect(await client.exists(key)).toBe(0);
    }
    for (const sent of [`-${now + 60_000}`, `${FAKE_EPOCH}@${now + 60_000}`]) {
      const key = newKey();
      expect(await answer(run(key, sent))).toBe('decided');
      expect(await client.exists(key)).toBe(1);
    }
  });
});

/** The several-rules and joint scripts' kind number and padded numbers of a policy. */
function kindAndParams(p: Policy): string[] {
  const params = policyParams(p);
  return [
    String(batchPolicyArgs(p)[0]),
    ...Array.from({ length: MAX_PARAMS }, (_, i) => String(params[i] ?? 0)),
  ];
}

/** A joint request's parts as the batch sends them, shared by its run: one part of one key. */
function jointShared(flags = '0', p: Policy = policy): string[] {
  return ['1', '1', '1', '', flags, ...kindAndParams(p)];
}

/** A run's shared values as the batch sends them: their count, then them. */
function withCount(values: readonly string[]): string[] {
  return [String(values.length), ...values];
}

/**
 * A deadline says nothing of whose clock times the request: `-<deadline>` is decided on the
 * server's time, so a bucket's key keeps a slack past its state and the state stores that expiry
 * (see `expiry.lua.ts`); `<now>@<deadline>` on the caller's, an exact expiry and none stored.
 */
describe.each([...ALONE, ...BATCHED])('%s: the time a deadline comes with', (_name, run) => {
  // gcra at 10 a minute: an admission's state ends 6 s on, its slack is a minute (a full refill).
  const NEEDED_MS = 6000;
  const SLACK_MS = 60_000;

  test("-<deadline>: the server's time, a slack kept past the state and stored", async () => {
    const now = await serverMs();
    const key = newKey();
    await run(key, `-${now + 60_000}`);
    expect(await client.pttl(key)).toBeGreaterThan(NEEDED_MS + SLACK_MS - 1000);
    const stored = await storedNumbers(client, key);
    expect(stored?.[2]).toBeGreaterThanOrEqual(now + NEEDED_MS + SLACK_MS);
  });

  test("<now>@<deadline>: the caller's time, its exact expiry and none stored", async () => {
    const now = await serverMs();
    const key = newKey();
    await run(key, `${now}@${now + 60_000}`);
    const ttl = await client.pttl(key);
    expect(ttl).toBeGreaterThan(NEEDED_MS - 1000);
    expect(ttl).toBeLessThanOrEqual(NEEDED_MS);
    expect((await storedNumbers(client, key))?.[2]).toBe(0);
  });
});

test('the batch script: a run past its deadline is replied SLUICE_LATE in each place, the others are decided', async () => {
  const now = await serverMs();
  const [late1, late2, onTime, given] = [newKey(), newKey(), newKey(), newKey()];
  // Three runs of one-key consumes: two requests past their deadline, one before its, and one on
  // a time of its own before its deadline.
  const reply = (await client.eval(
    BATCH_SCRIPT,
    4,
    late1,
    late2,
    onTime,
    given,
    '1',
    ...batchPolicyArgs(policy),
    ...['2', '1', '1', '1', `-${now - 1}`, '1'],
    ...['1', '1', '1', '1', `-${now + 60_000}`, '1'],
    ...['1', '1', '1', '1', `${FAKE_EPOCH}@${now + 60_000}`, '1'],
  )) as unknown[];
  expect(reply.slice(0, 2).map((value) => (value as Error).message)).toEqual([
    expect.stringMatching(LATE),
    expect.stringMatching(LATE),
  ]);
  // Admitted without delay: `remaining, resetMs`.
  expect(reply.slice(2)).toEqual([9, 6000, 9, 6000]);
  expect(await client.exists(late1, late2)).toBe(0);
  expect(await client.exists(onTime, given)).toBe(2);
});

test('a deadline on a run of one key sent once skips that run alone', async () => {
  const now = await serverMs();
  const [hot, other] = [newKey(), newKey()];
  const reply = (await client.eval(
    BATCH_SCRIPT,
    2,
    hot,
    other,
    '1',
    ...batchPolicyArgs(policy),
    // Three requests on the same key (count negated: the key sent once), then one on another.
    ...['-3', '1', '1', '1', `-${now - 1}`, '1'],
    ...['1', '1', '1', '1', '', '1'],
  )) as unknown[];
  expect(reply.slice(0, 3).every((value) => value instanceof Error && LATE.test(value.message))).toBe(true);
  expect(reply.slice(3)).toEqual([9, 6000]);
  expect(await client.exists(hot)).toBe(0);
});

test('a run of alike joint decisions, their parts sent once, past its deadline: each replied SLUICE_LATE', async () => {
  const now = await serverMs();
  const [late1, late2, onTime1, onTime2] = [newKey(), newKey(), newKey(), newKey()];
  const run = (count: number, time: string) => [
    String(count),
    '4',
    '1',
    '0',
    time,
    ...withCount(jointShared()),
  ];
  const reply = (await client.eval(
    BATCH_SCRIPT,
    4,
    late1,
    late2,
    onTime1,
    onTime2,
    '0',
    ...run(2, `-${now - 1}`),
    ...run(2, `-${now + 60_000}`),
  )) as unknown[];
  expect(reply.slice(0, 2).every((value) => value instanceof Error && LATE.test(value.message))).toBe(true);
  // Six integers per key: code, remaining, resetMs, waitMs, then the receipt (gcra's: its start).
  expect(reply.slice(2).map((value, i) => (i % 6 < 4 ? value : typeof value))).toEqual(
    Array.from({ length: 2 }, () => [0, 9, 6000, 0, 'number', 'number']).flat(),
  );
  expect(await client.exists(late1, late2)).toBe(0);
  expect(await client.exists(onTime1, onTime2)).toBe(2);
});

/**
 * The usual request, cost 1 on the server's time, sends its deadline in the cost's place, one
 * argument in all (`-<deadline>`, see `scriptArgs`): read as cost 1, the server's time (a slack
 * kept), and past the deadline nothing written.
 */
describe.each([
  [
    'a policy of its own',
    (key: string, until: number) =>
      client.eval(policyScript(policy), 1, key, ...policyScriptArgs({ cost: 1, until })),
  ],
  [
    'the shared single-rule script',
    (key: string, until: number) =>
      client.eval(LUA_SCRIPTS.gcra, 1, key, ...scriptArgs({ policy, cost: 1, until })),
  ],
])("%s: a deadline folded into the cost's place", (_name, run) => {
  test('one argument for the request; past it SLUICE_LATE and nothing written, before it cost 1 with a slack', async () => {
    expect(policyScriptArgs({ cost: 1, until: 5 })).toEqual(['-5']);
    const now = await serverMs();
    const late = newKey();
    expect(await answer(run(late, now - 1))).toMatch(LATE);
    expect(await client.exists(late)).toBe(0);
    const key = newKey();
    expect(await run(key, now + 60_000)).toBeDefined();
    // One unit taken (gcra's state counts a unit's debt as the window's ms).
    expect((await storedNumbers(client, key))?.[1]).toBe(policy.windowMs);
    expect(await client.pttl(key)).toBeGreaterThan(60_000);
  });
});
