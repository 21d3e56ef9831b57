import { EventEmitter } from 'node:events';
import {
  ALGORITHMS,
  createLimiter,
  MemoryStore,
  RedisStore,
  SluiceConfigError,
  type Limiter,
  type LimiterMetrics,
  type Store,
} from '../../src';
import { createHttpLimiter, type HttpRequest, type RateLimitOptions } from '../../src/adapter';
import { fakeClock, type FakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';

type Req = { readonly id: number };
type Options = RateLimitOptions<Req, never, FakeResponse>;

/** Node's response as the give-back reads it: `statusCode`, `writableFinished`, and its `close`. */
class FakeResponse extends EventEmitter {
  statusCode = 200;
  writableFinished = false;
  closed = false;

  /** The response is sent with `status`, then closes (as Node emits `close` after `finish`). */
  send(status: number): void {
    this.statusCode = status;
    this.writableFinished = true;
    this.close();
  }

  close(): void {
    this.closed = true;
    this.emit('close');
  }
}

const HTTP: HttpRequest = { remoteAddress: '203.0.113.9', url: '/login', headers: {} };
const redis = useRedisServer();
let clock: FakeClock;
let prefixes = 0;
beforeEach(() => {
  clock = fakeClock();
});

/** Waits on the loop until `read` gives `expected` (a give-back on Redis lands after the response). */
async function eventually(read: () => Promise<number>, expected: number): Promise<void> {
  const deadline = Date.now() + 5000;
  let seen = await read();
  while (seen !== expected) {
    if (Date.now() > deadline) throw new Error(`expected ${expected}, still ${seen}`);
    await new Promise((done) => setImmediate(done));
    seen = await read();
  }
}

/** One request through the limit: its outcome's kind, and its response to finish as the test says. */
async function admit(limit: ReturnType<typeof createHttpLimiter<Req, never, FakeResponse>>) {
  const response = new FakeResponse();
  const outcome =
    limit.decideSync({ id: 1 }, HTTP, response) ?? (await limit.decide({ id: 1 }, HTTP, response));
  return { kind: outcome.kind, outcome, response };
}

describe('countWhen: options', () => {
  test.each([['sometimes'], [42], [true], [null], [{}]])('%p is refused, naming countWhen', (value) => {
    const make = () => createHttpLimiter<Req, never>({ rate: '5/15m', countWhen: value as never });
    expect(make).toThrow(SluiceConfigError);
    expect(make).toThrow(/^countWhen .*expected 'failed', 'succeeded' or a function/);
  });

  test('a limiter that cannot give back exactly is refused at creation', () => {
    const store: Store = {
      consume: () => Promise.reject(new Error('unused')),
      reset: () => Promise.resolve(),
    };
    expect(() => createHttpLimiter<Req, never>({ rate: '5/15m', store, countWhen: 'failed' })).toThrow(
      /^countWhen "failed": needs a limiter from createLimiter\(\) on a store that gives back exactly/,
    );
    const foreign = { ...createLimiter({ rate: '5/15m' }) } as Limiter;
    expect(() => createHttpLimiter<Req, never>({ limiter: foreign, countWhen: 'failed' })).toThrow(
      SluiceConfigError,
    );
  });
});

describe.each([
  ['memory', (): Store => new MemoryStore()],
  ['redis', (): Store => new RedisStore({ client: redis.client() })],
])('countWhen on the %s store', (_name, storeOf) => {
  const limiterOf = (options: Record<string, unknown>): Limiter =>
    createLimiter({
      clock,
      timeoutMs: 5000,
      store: storeOf(),
      prefix: `cw-${++prefixes}`,
      ...options,
    } as never);
  const left = (limiter: Limiter) => async () => (await limiter.peek('login')).remaining;

  test.each(ALGORITHMS)('%s: a success of cost 2 gives back exactly what it took', async (algorithm) => {
    const limiter = limiterOf({
      algorithm,
      rate: '10/1m',
      ...(algorithm === 'leaky-bucket' ? { nodelay: true } : {}),
    });
    const limit = createHttpLimiter<Req, never, FakeResponse>({
      limiter,
      key: 'login',
      cost: 2,
      countWhen: 'failed',
    });
    for (let i = 0; i < 3; i++) (await admit(limit)).response.send(401);
    await eventually(left(limiter), 4);
    clock.advance(1); // a later millisecond: the sliding log's entries are told apart by time
    const success = await admit(limit);
    expect(success.kind).toBe('next');
    expect(await left(limiter)()).toBe(2);
    success.response.send(200);
    await eventually(left(limiter), 4);
  });

  test('a give-back is timed when it happens: a token bucket written since is not refilled twice', async () => {
    // 10 per minute, a token each 6 s, 10 at once.
    const limiter = limiterOf({ algorithm: 'token-bucket', rate: '10/1m' });
    const limit = createHttpLimiter<Req, never, FakeResponse>({ limiter, key: 'login', countWhen: 'failed' });
    const first = await admit(limit);
    clock.advance(3000);
    (await admit(limit)).response.send(401);
    first.response.send(200);
    // Half a token came back in the 3 s, one was given back: 9 left, not 10.
    await eventually(left(limiter), 9);
    for (let i = 0; i < 20; i++) await new Promise((done) => setImmediate(done));
    expect(await left(limiter)()).toBe(9);
  });

  test('a response that errors and closes twice gives back once, and is reported once', async () => {
    const refunded: number[] = [];
    const ignore = () => undefined;
    const sink: LimiterMetrics = {
      decided: ignore,
      storeCall: ignore,
      storeError: ignore,
      storeUp: ignore,
      blockCacheHit: ignore,
      leaseCall: ignore,
      refunded: () => refunded.push(1),
    };
    const limiter = limiterOf({ rate: '5/15m', metrics: { limiter: () => sink } });
    const limit = createHttpLimiter<Req, never, FakeResponse>({
      limiter,
      key: 'login',
      countWhen: 'succeeded',
    });
    (await admit(limit)).response.send(200);
    const failed = await admit(limit);
    failed.response.statusCode = 500;
    failed.response.on('error', () => undefined); // as Node's server listens
    failed.response.emit('error', new Error('write EPIPE'));
    failed.response.close();
    failed.response.close();
    await eventually(left(limiter), 4);
    // Nothing more comes back later.
    for (let i = 0; i < 20; i++) await new Promise((done) => setImmediate(done));
    expect(await left(limiter)()).toBe(4);
    expect(refunded).toEqual([1]);
  });

  test('a function gets the request and the response once it is done', async () => {
    const seen: Array<[Req, number]> = [];
    const limiter = limiterOf({ rate: '5/15m' });
    const limit = createHttpLimiter<Req, never, FakeResponse>({
      limiter,
      key: 'login',
      countWhen: (req, res) => {
        seen.push([req, res.statusCode]);
        return res.statusCode === 401;
      },
    });
    (await admit(limit)).response.send(401);
    (await admit(limit)).response.send(204);
    await eventually(left(limiter), 4);
    expect(seen).toEqual([
      [{ id: 1 }, 401],
      [{ id: 1 }, 204],
    ]);
  });

  test('a function that throws counts, reported to onCallbackError', async () => {
    const errors: string[] = [];
    const limiter = limiterOf({ rate: '5/15m' });
    const limit = createHttpLimiter<Req, never, FakeResponse>({
      limiter,
      key: 'login',
      countWhen: () => {
        throw new Error('no session');
      },
      onCallbackError: ({ source, error }) => errors.push(`${source}: ${error.message}`),
    });
    (await admit(limit)).response.send(200);
    for (let i = 0; i < 20; i++) await new Promise((done) => setImmediate(done));
    expect(await left(limiter)()).toBe(4);
    expect(errors).toEqual([
      'countWhen: countWhen "Error: no session": the function threw; the response counts (its units stay taken)',
    ]);
  });

  test('a held (delayed) admission whose client leaves gives its turn back once, not again at its close', async () => {
    // One at once, then one per 6 s: the second request is held 6 s.
    const limiter = limiterOf({ algorithm: 'leaky-bucket', rate: '10r/m', burst: 5 });
    const limit = createHttpLimiter<Req, never, FakeResponse>({
      limiter,
      key: 'login',
      countWhen: 'succeeded',
    });
    const peekExcess = async () => (await limiter.peek('login')).remaining;
    (await admit(limit)).response.send(200);
    const before = await peekExcess();
    const held = await admit(limit);
    expect(held.kind).toBe('delay');
    // The client leaves while held: the hold gives the turn back, the response's close does not again.
    if (held.outcome.kind !== 'delay') throw new Error('not held');
    const passed = held.outcome.hold(held.response as never);
    held.response.close();
    expect(await passed).toBe(false);
    await eventually(peekExcess, before);
    for (let i = 0; i < 20; i++) await new Promise((done) => setImmediate(done));
    expect(await peekExcess()).toBe(before);
  });

  test('a held (delayed) admission that is served gives back after its response when it does not count', async () => {
    const limiter = limiterOf({ algorithm: 'leaky-bucket', rate: '10r/m', burst: 5 });
    const limit = createHttpLimiter<Req, never, FakeResponse>({ limiter, key: 'login', countWhen: 'failed' });
    const peekLeft = async () => (await limiter.peek('login')).remaining;
    (await admit(limit)).response.send(401);
    const before = await peekLeft();
    const held = await admit(limit);
    if (held.outcome.kind !== 'delay') throw new Error('not held');
    jest.useFakeTimers({
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'hrtime', 'performance'],
    });
    try {
      const passed = held.outcome.hold(held.response as never);
      jest.advanceTimersByTime(held.outcome.delayMs);
      expect(await passed).toBe(true);
    } finally {
      jest.useRealTimers();
    }
    expect(await peekLeft()).toBe(before - 1);
    held.response.send(200);
    await eventually(peekLeft, before);
  });

  test('several limits with countWhen on one: only that one gives back', async () => {
    const perClient = limiterOf({ rate: '10/1m' });
    const login = limiterOf({ rate: '5/15m' });
    const limit = createHttpLimiter<Req, never, FakeResponse>([
      { limiter: perClient, key: 'login' },
      { limiter: login, key: 'login', countWhen: 'failed' } as Options,
    ]);
    (await admit(limit)).response.send(200);
    (await admit(limit)).response.send(403);
    await eventually(left(login), 4);
    expect(await left(perClient)()).toBe(8);
  });
});
