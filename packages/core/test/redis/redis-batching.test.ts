import type Redis from 'ioredis';
import {
  createLimiter,
  RedisStore,
  SluiceConfigError,
  StoreTimeoutError,
  type Decision,
  type Limiter,
  type LimiterEvents,
  type Verdict,
} from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { MAX_FULL_IN_FLIGHT, MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';
import { FAKE_EPOCH } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';
import { startTcpProxy, type TcpProxy } from '../harness/tcp-proxy';
import { storedNumbers } from './packed-state';

/**
 * Issue 11: what batching changes on the wire, counted by Redis itself (`INFO commandstats`):
 * an idle store sends at once, a busy one sends fuller calls, one `TIME` and at most one script
 * reload per call; and what it must not change: failures and deadlines are each request's own.
 */
const redis = useRedisServer();
let client: Redis;
let prefixes = 0;

beforeAll(async () => {
  client = redis.client();
  // Every script loaded on this connection, so that counts below are of decisions only.
  await new RedisStore({ client }).consume({
    prefix: 'warm',
    key: 'k',
    policy: resolvePolicy({ rate: '1r/s' }),
    cost: 1,
  });
});

/** Calls of one command (`time`, `eval`, …) in INFO commandstats, and how many of them failed. */
async function stats(command: string): Promise<{ calls: number; failed: number }> {
  const info = await client.info('commandstats');
  const line = new RegExp(`^cmdstat_${command}:calls=(\\d+),.*failed_calls=(\\d+)`, 'm').exec(info);
  return { calls: Number(line?.[1] ?? 0), failed: Number(line?.[2] ?? 0) };
}

async function calls(command: string): Promise<number> {
  return (await stats(command)).calls;
}

const policy = resolvePolicy({ algorithm: 'fixed-window', rate: '1000/1h' });

function consumeMany(store: RedisStore, count: number, nowMs?: number): Promise<Verdict[]> {
  const prefix = `many-${++prefixes}`;
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      store.consume({ prefix, key: `k${i % 7}`, policy, cost: 1, nowMs }),
    ),
  );
}

describe('calls on the wire', () => {
  test('an idle store sends a decision at once, alone, before consume returns: one call, no waiting', async () => {
    const store = new RedisStore({ client });
    await client.config('RESETSTAT');
    const send = jest.spyOn(client, 'sendCommand');
    const pending = store.consume({ prefix: `idle-${++prefixes}`, key: 'k', policy, cost: 1 });
    // Written to the connection synchronously, inside consume: no timer, no tick.
    expect(send).toHaveBeenCalledTimes(1);
    send.mockRestore();
    expect(await pending).toMatchObject({ allowed: true, remaining: 999 });
    expect(await scriptCalls(client)).toBe(1);
  });

  test.each([
    [1, 1],
    [MAX_IN_FLIGHT, MAX_IN_FLIGHT],
    [256, MAX_IN_FLIGHT + Math.ceil((256 - MAX_IN_FLIGHT) / 64)],
    [1000, MAX_IN_FLIGHT + Math.ceil((1000 - MAX_IN_FLIGHT) / 64)],
  ])(
    '%i decisions asked at once: %i script calls (the first alone, then batches of 64)',
    async (count, expected) => {
      const store = new RedisStore({ client });
      await client.config('RESETSTAT');
      const verdicts = await consumeMany(store, count);
      expect(verdicts.filter((v) => v.allowed)).toHaveLength(count);
      expect(await scriptCalls(client)).toBe(expected);
    },
  );

  test.each([
    // Two alone, three full batches at once; the last ten wait for a call to land.
    [MAX_IN_FLIGHT + 3 * 64 + 10, MAX_IN_FLIGHT + 3, MAX_IN_FLIGHT + 4],
    // Full batches go until MAX_FULL_IN_FLIGHT calls fly; the rest wait their turn.
    [
      MAX_IN_FLIGHT + (MAX_FULL_IN_FLIGHT + 2) * 64 + 5,
      MAX_FULL_IN_FLIGHT,
      MAX_IN_FLIGHT + MAX_FULL_IN_FLIGHT + 2 + 1,
    ],
  ])(
    '%i decisions asked at once: %i calls leave at once (full batches do not wait for a call to land), %i in all',
    async (count, atOnce, total) => {
      const store = new RedisStore({ client });
      const prefix = `full-${++prefixes}`;
      await client.config('RESETSTAT');
      const send = jest.spyOn(client, 'sendCommand');
      const pending = Array.from({ length: count }, () =>
        store.consume({ prefix, key: 'hot', policy, cost: 1 }),
      );
      // Written before any reply could be read: no call has landed yet.
      expect(send).toHaveBeenCalledTimes(atOnce);
      send.mockRestore();
      const verdicts = await Promise.all(pending);
      expect(await scriptCalls(client)).toBe(total);
      // Each decided once, in arrival order: the first 1000 admitted, exactly.
      expect(verdicts.map((v) => v.allowed)).toEqual(Array.from({ length: count }, (_, i) => i < 1000));
      expect(verdicts.slice(0, 1000).map((v) => v.remaining)).toEqual(
        Array.from({ length: Math.min(count, 1000) }, (_, i) => 999 - i),
      );
      const counted = (await storedNumbers(client, `${prefix}:{hot}:fixed-window`))?.[1];
      expect(counted).toBe(Math.min(count, 1000));
    },
  );

  test('a run of requests on one key sends the key once; distinct keys, each once', async () => {
    const store = new RedisStore({ client });
    const prefix = `once-${++prefixes}`;
    const send = jest.spyOn(client, 'sendCommand');
    const ask = (key: string) => store.consume({ prefix, key, policy, cost: 1 });
    // Two leave alone; the rest wait for a call to land and go as one batch: 6 on 'hot', then
    // 3 distinct and 2 on 'hot' again (one run: a run's kind is told by its second request).
    const keys = ['a', 'b', ...Array<string>(6).fill('hot'), 'x', 'y', 'z', 'hot', 'hot'];
    const verdicts = await Promise.all(keys.map(ask));
    const calls = send.mock.calls.map(([command]) => command as unknown as { name: string; args: unknown[] });
    send.mockRestore();
    const batch = calls.filter(({ name }) => name === 'evalsha' || name === 'eval').at(-1);
    // numkeys, then the keys: 'hot' once for its run of six, then x y z hot hot.
    const numkeys = Number(batch?.args[1]);
    expect(batch?.args.slice(2, 2 + numkeys)).toEqual(
      ['hot', 'x', 'y', 'z', 'hot', 'hot'].map((key) => `${prefix}:{${key}}:fixed-window`),
    );
    // Decided as one by one: the hot key's eight admissions counted in order.
    expect(verdicts.map((v) => v.allowed)).toEqual(keys.map(() => true));
    const hot = keys.flatMap((key, i) => (key === 'hot' ? [verdicts[i]?.remaining] : []));
    expect(hot).toEqual(Array.from({ length: 8 }, (_, i) => 999 - i));
    expect((await storedNumbers(client, `${prefix}:{hot}:fixed-window`))?.[1]).toBe(8);
  });

  test('batch.maxSize bounds a call; batch: false sends one call per decision', async () => {
    await client.config('RESETSTAT');
    await consumeMany(new RedisStore({ client, batch: { maxSize: 10 } }), 202);
    expect(await scriptCalls(client)).toBe(MAX_IN_FLIGHT + 20);
    await client.config('RESETSTAT');
    await consumeMany(new RedisStore({ client, batch: false }), 202);
    expect(await scriptCalls(client)).toBe(202);
  });

  test("one TIME per call on the server's clock; none when the limiter has a clock", async () => {
    const store = new RedisStore({ client });
    await client.config('RESETSTAT');
    await consumeMany(store, 300);
    expect(await calls('time')).toBe(await scriptCalls(client));
    await client.config('RESETSTAT');
    await consumeMany(store, 300, FAKE_EPOCH);
    expect(await calls('time')).toBe(0);
  });

  test('a limiter with a clock sends each request its own time, in one batch', async () => {
    let now = FAKE_EPOCH;
    const limiter = createLimiter({
      algorithm: 'fixed-window',
      rate: '2/1s',
      store: new RedisStore({ client }),
      prefix: `clock-${++prefixes}`,
      clock: () => now,
      timeoutMs: 10_000,
    });
    const pending: Promise<Decision>[] = [];
    // Every 600 ms: the window opens anew on every other request.
    for (let i = 0; i < 8; i++) {
      pending.push(limiter.consume('k'));
      now += 600;
    }
    const decisions = await Promise.all(pending);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, true, true, true]);
    expect(decisions.map((d) => d.remaining)).toEqual([1, 0, 1, 0, 1, 0, 1, 0]);
  });

  test('SCRIPT FLUSH: the script is sent again once per call that met NOSCRIPT, not once per decision', async () => {
    const store = new RedisStore({ client });
    await consumeMany(store, 10); // this store's policy scripts are loaded on the connection
    await client.script('FLUSH');
    await client.config('RESETSTAT');
    const verdicts = await consumeMany(store, 300);
    expect(verdicts.every((v) => v.allowed)).toBe(true);
    const made = MAX_IN_FLIGHT + Math.ceil((300 - MAX_IN_FLIGHT) / 64);
    const evalsha = await stats('evalsha');
    const evals = await stats('eval');
    // Each call ran once; one that met NOSCRIPT (a failed EVALSHA) was sent once more, as EVAL.
    expect(evalsha.calls - evalsha.failed + evals.calls).toBe(made);
    // (ioredis sends the text once per connection: a second call that met NOSCRIPT may find it
    // sent by the first, and go as EVALSHA again.)
    expect(evals.calls).toBeGreaterThan(0);
    expect(evals.calls).toBeLessThanOrEqual(evalsha.failed);
    expect(evalsha.failed).toBeLessThanOrEqual(made);
    expect(evals.failed).toBe(0);
  });
});

describe('failures', () => {
  test("one request's error in a batch is its own: writes fail on OOM, a peek in the same call answers", async () => {
    const store = new RedisStore({ client });
    const prefix = `oom-${++prefixes}`;
    try {
      await client.config('SET', 'maxmemory', '1');
      const asked = [
        ...Array.from({ length: MAX_IN_FLIGHT }, () => store.consume({ prefix, key: 'a', policy, cost: 0 })),
        store.consume({ prefix, key: 'w', policy, cost: 1 }),
        store.consume({ prefix, key: 'p', policy, cost: 0 }),
        store.consume({ prefix, key: 'x', policy, cost: 2 }),
      ];
      const settled = await Promise.allSettled(asked);
      const [write, peek, other] = settled.slice(MAX_IN_FLIGHT);
      expect(write).toMatchObject({
        status: 'rejected',
        reason: expect.objectContaining({ message: expect.stringMatching(/^OOM/) }),
      });
      expect(peek).toMatchObject({ status: 'fulfilled', value: { allowed: true, remaining: 1000 } });
      expect(other).toMatchObject({ status: 'rejected' });
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
  });

  test('a call that fails fails each of its decisions into onStoreError, each once', async () => {
    const proxy = await startTcpProxy(redis.server().port);
    // No resending on a new connection: a call cut off fails.
    const doomed = redis.client({
      port: proxy.port,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
    });
    await doomed.ping();
    const limiter = createLimiter({
      rate: '100/1m',
      store: new RedisStore({ client: doomed }),
      prefix: `fail-${++prefixes}`,
      onStoreError: 'fail-open',
      timeoutMs: 5000,
    });
    const errors: LimiterEvents['storeError'][] = [];
    limiter.on('storeError', (event) => errors.push(event));
    expect((await limiter.consume('warm-up')).degraded).toBeUndefined();
    proxy.setBlackhole(true);
    const pending = Array.from({ length: 100 }, (_, i) => limiter.consume(`k${i}`));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The connection drops with three calls on their way (two alone, a full batch), 34 waiting.
    await proxy.close();
    const decisions = await Promise.all(pending);
    doomed.disconnect();
    expect(decisions.filter((d) => d.degraded !== 'fail-open')).toEqual([]);
    // Each decision reported its own failure, once (the circuit opened after the first three).
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(new Set(errors.map((e) => e.key)).size).toBe(errors.length);
  });
});

describe('deadlines', () => {
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  test('requests waiting behind a call that does not return are decided by onStoreError at their own deadline, and never sent', async () => {
    proxy = await startTcpProxy(redis.server().port);
    const stalled = redis.client({ port: proxy.port });
    await stalled.ping();
    const prefix = `stuck-${++prefixes}`;
    // Long enough that a loaded machine's clock reading is tight enough for a deadline (a
    // quarter of it, see ServerClock), so that every call carries one.
    const timeoutMs = 200;
    // Batches of up to 1000: the 198 behind the first two calls are never a full batch, so they
    // wait for a place (a full batch would leave at once, see above).
    const store = new RedisStore({ client: stalled, batch: { maxSize: 1000 } });
    // Two limiters on one store: the second's circuit stays closed when the first's opens.
    const [limiter, other] = [1, 2].map(() =>
      createLimiter({
        algorithm: 'fixed-window',
        rate: '1000/1h',
        store,
        prefix,
        onStoreError: 'fail-open',
        timeoutMs,
      }),
    ) as [Limiter, Limiter];
    expect((await limiter.consume('warm-up')).degraded).toBeUndefined();
    proxy.setBlackhole(true);
    const started = performance.now();
    const first = Array.from({ length: 200 }, () => limiter.consume('hot'));
    // Asked later: each request keeps its own deadline, from when it was asked.
    await new Promise((resolve) => setTimeout(resolve, (timeoutMs * 3) / 5));
    const laterAsked = performance.now();
    const later = other.consume('hot');
    const firstDecisions = await Promise.all(first);
    const firstMs = performance.now() - started;
    const laterDecision = await later;
    const laterMs = performance.now() - laterAsked;
    expect(firstDecisions.every((d) => d.degraded === 'fail-open')).toBe(true);
    expect(laterDecision.degraded).toBe('fail-open');
    expect(firstMs).toBeGreaterThanOrEqual(timeoutMs - 1);
    expect(laterMs).toBeGreaterThanOrEqual(timeoutMs - 1);

    proxy.setBlackhole(false);
    // The calls held by the network arrive now, past their requests' deadlines: the script takes
    // nothing for them (each carries its deadline on the server's clock), and the 198 that
    // waited past theirs were never sent. Every one of the 200 was decided fail-open, and none is
    // counted in Redis too. (The first calls freed their places at their requests' deadline, so
    // the requests asked later, still within theirs, could leave.)
    await stalled.ping();
    expect(await storedNumbers(client, `${prefix}:{hot}:fixed-window`)).toBeUndefined();
  });

  test('a store request waiting past its timeoutMs rejects with StoreTimeoutError without being sent', async () => {
    proxy = await startTcpProxy(redis.server().port);
    const stalled = redis.client({ port: proxy.port });
    await stalled.ping();
    const store = new RedisStore({ client: stalled });
    const prefix = `store-stuck-${++prefixes}`;
    await store.consume({ prefix, key: 'warm', policy, cost: 1 });
    proxy.setBlackhole(true);
    const ahead = Array.from({ length: MAX_IN_FLIGHT }, () =>
      store.consume({ prefix, key: 'k', policy, cost: 1 }),
    );
    const waiting = store.consume({ prefix, key: 'k', policy, cost: 1, timeoutMs: 20 });
    await expect(waiting).rejects.toBeInstanceOf(StoreTimeoutError);
    proxy.setBlackhole(false);
    await Promise.all(ahead);
    expect((await storedNumbers(client, `${prefix}:{k}:fixed-window`))?.[1]).toBe(MAX_IN_FLIGHT);
  });

  test('a joint decision or a permit acquire waiting past its timeoutMs rejects with StoreTimeoutError, never sent', async () => {
    proxy = await startTcpProxy(redis.server().port);
    const stalled = redis.client({ port: proxy.port });
    await stalled.ping();
    const store = new RedisStore({ client: stalled });
    const prefix = `ops-stuck-${++prefixes}`;
    const permits = store.permits();
    await store.consume({ prefix, key: 'warm', policy, cost: 1 });
    proxy.setBlackhole(true);
    const ahead = Array.from({ length: MAX_IN_FLIGHT }, () =>
      store.consume({ prefix, key: 'k', policy, cost: 1 }),
    );
    const part = { prefix, key: 'k', policies: [policy], cost: 1, timeoutMs: 20 };
    const joint = store.consumeAll([part, { ...part, prefix: `${prefix}-other` }]);
    const acquire = permits.acquire({ prefix, key: 'k', max: 5, leaseMs: 10_000, id: 'late', timeoutMs: 20 });
    await expect(joint).rejects.toBeInstanceOf(StoreTimeoutError);
    await expect(acquire).rejects.toBeInstanceOf(StoreTimeoutError);
    proxy.setBlackhole(false);
    await Promise.all(ahead);
    // Only the two calls ahead were sent: no joint unit taken, no lease.
    expect((await storedNumbers(client, `${prefix}:{k}:fixed-window`))?.[1]).toBe(MAX_IN_FLIGHT);
    expect(await client.get(`${prefix}-other:{k}:fixed-window`)).toBeNull();
    expect(await client.exists(permits.keyOf({ prefix, key: 'k' }))).toBe(0);
  });
});

describe('the batch option', () => {
  test.each([
    [{ maxSize: 1 }, 'batch.maxSize'],
    [{ maxSize: 1001 }, 'batch.maxSize'],
    [{ maxSize: 2.5 }, 'batch.maxSize'],
    [{ maxSize: '64' }, 'batch.maxSize'],
    [{ size: 64 }, 'batch'],
    ['yes', 'batch'],
    [null, 'batch'],
    [[], 'batch'],
  ])('%p is refused naming %s', (batch, option) => {
    expect(() => new RedisStore({ client, batch: batch as never })).toThrow(SluiceConfigError);
    expect(() => new RedisStore({ client, batch: batch as never })).toThrow(
      expect.objectContaining({ option }),
    );
  });

  test.each([[true], [false], [{}], [{ maxSize: 2 }], [{ maxSize: 1000 }]])('%p is accepted', (batch) => {
    expect(() => new RedisStore({ client, batch })).not.toThrow();
  });
});
