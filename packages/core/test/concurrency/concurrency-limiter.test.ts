import { createConcurrencyLimiter, MemoryStore, type ConcurrencyDecision } from '../../src';
import { errorOf } from '../contract/config-error-of';

/** Lets every settled promise run its continuations. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('createConcurrencyLimiter, in memory', () => {
  afterEach(() => jest.useRealTimers());

  test('at most max permits per key, each key apart; a release frees one', async () => {
    const limiter = createConcurrencyLimiter({ max: 2 });
    const a1 = await limiter.acquire('a');
    const a2 = await limiter.acquire('a');
    const a3 = await limiter.acquire('a');
    const b1 = await limiter.acquire('b');
    expect([a1.allowed, a2.allowed, a3.allowed, b1.allowed]).toEqual([true, true, false, true]);
    expect(a2).toMatchObject({ key: 'a', max: 2, inFlight: 2, retryAfterMs: 0, waitedMs: 0 });
    // No queue, so no estimate: a client is told no Retry-After it could not trust.
    expect(a3).toEqual({
      allowed: false,
      key: 'a',
      max: 2,
      inFlight: 2,
      retryAfterMs: 0,
      waitedMs: 0,
      reason: 'limited',
    });
    expect(a3.permit).toBeUndefined();
    expect(await limiter.inFlight('a')).toBe(2);
    await a1.permit?.release();
    expect(await limiter.inFlight('a')).toBe(1);
    expect((await limiter.acquire('a')).allowed).toBe(true);
    expect(limiter.stats()).toEqual({ inFlight: 3, queued: 0 });
  });

  test('release is idempotent: a second call gives nothing back', async () => {
    const limiter = createConcurrencyLimiter({ max: 1 });
    const first = await limiter.acquire('k');
    await first.permit?.release();
    expect(first.permit?.released).toBe(true);
    const second = await limiter.acquire('k');
    await first.permit?.release();
    expect(await limiter.inFlight('k')).toBe(1);
    expect((await limiter.acquire('k')).allowed).toBe(false);
    await second.permit?.release();
    expect(await limiter.inFlight('k')).toBe(0);
    expect(limiter.stats()).toEqual({ inFlight: 0, queued: 0 });
  });

  test('acquireSync answers at once in memory; undefined when it would have to wait', async () => {
    const limiter = createConcurrencyLimiter({ max: 1, queue: { maxWaitMs: 1000 } });
    const first = limiter.acquireSync('k');
    expect(first?.allowed).toBe(true);
    expect(limiter.acquireSync('k')).toBeUndefined();
    expect(await limiter.inFlight('k')).toBe(1);
    expect(createConcurrencyLimiter({ max: 1 }).acquireSync('k')?.allowed).toBe(true);
    await first?.permit?.release();
  });

  test('limiters on one store and prefix share their counts; other prefixes do not', async () => {
    const store = new MemoryStore();
    const a = createConcurrencyLimiter({ max: 1, store, prefix: 'checkout' });
    const b = createConcurrencyLimiter({ max: 1, store, prefix: 'checkout' });
    const c = createConcurrencyLimiter({ max: 1, store, prefix: 'search' });
    expect((await a.acquire('u')).allowed).toBe(true);
    expect((await b.acquire('u')).allowed).toBe(false);
    expect((await c.acquire('u')).allowed).toBe(true);
  });

  test('the queue serves each key in arrival order, handing a released permit straight over', async () => {
    const limiter = createConcurrencyLimiter({ max: 1, queue: { maxWaitMs: 60_000 } });
    const held = await limiter.acquire('k');
    const order: number[] = [];
    const waits = [1, 2, 3].map((n) =>
      limiter.acquire('k').then((d) => {
        order.push(n);
        return d;
      }),
    );
    await settle();
    expect(limiter.stats()).toEqual({ inFlight: 1, queued: 3 });
    // A newcomer, even once a permit is free, goes behind those waiting.
    await held.permit?.release();
    const late = limiter.acquire('k');
    let previous: ConcurrencyDecision = await (waits[0] as Promise<ConcurrencyDecision>);
    for (const next of waits.slice(1)) {
      expect(previous.allowed).toBe(true);
      await previous.permit?.release();
      previous = await next;
    }
    await previous.permit?.release();
    expect((await late).allowed).toBe(true);
    expect(order).toEqual([1, 2, 3]);
    expect(await limiter.inFlight('k')).toBe(1);
  });

  test('a waiter is served when a limiter sharing the table releases', async () => {
    const store = new MemoryStore();
    const a = createConcurrencyLimiter({ max: 1, store, prefix: 'p' });
    const b = createConcurrencyLimiter({ max: 1, store, prefix: 'p', queue: { maxWaitMs: 60_000 } });
    const held = await a.acquire('k');
    const waiting = b.acquire('k');
    await settle();
    expect(b.stats().queued).toBe(1);
    await held.permit?.release();
    const served = await waiting;
    expect(served.allowed).toBe(true);
    expect(served.waitedMs).toBeGreaterThanOrEqual(0);
    expect(await a.inFlight('k')).toBe(1);
  });

  test('the queue gives up after maxWaitMs, with a Retry-After estimate from measured hold times', async () => {
    jest.useFakeTimers();
    const limiter = createConcurrencyLimiter({ max: 2, queue: { maxWaitMs: 500 } });
    // Two permits held 200 ms each: the mean hold time is 200 ms.
    const p1 = await limiter.acquire('k');
    const p2 = await limiter.acquire('k');
    jest.advanceTimersByTime(200);
    await p1.permit?.release();
    await p2.permit?.release();
    await limiter.acquire('k');
    await limiter.acquire('k');
    const waiting = limiter.acquire('k');
    jest.advanceTimersByTime(499);
    await Promise.resolve();
    expect(limiter.stats().queued).toBe(1);
    jest.advanceTimersByTime(1);
    const refused = await waiting;
    // One in line (itself) over two permits freed every 200 ms: about 100 ms.
    expect(refused).toMatchObject({
      allowed: false,
      reason: 'queue-timeout',
      waitedMs: 500,
      retryAfterMs: 100,
    });
    expect(limiter.stats()).toEqual({ inFlight: 2, queued: 0 });
  });

  test('the queue is bounded: past maxSize a request is refused at once', async () => {
    const limiter = createConcurrencyLimiter({ max: 1, queue: { maxWaitMs: 60_000, maxSize: 2 } });
    await limiter.acquire('a');
    await limiter.acquire('b');
    void limiter.acquire('a');
    void limiter.acquire('b');
    const third = await limiter.acquire('a');
    expect(third).toMatchObject({ allowed: false, reason: 'queue-full' });
    expect(limiter.stats().queued).toBe(2);
  });

  test("maxPerKey bounds one key's line: past it that key is refused at once, other keys still wait", async () => {
    const limiter = createConcurrencyLimiter({
      max: 1,
      queue: { maxWaitMs: 60_000, maxSize: 10, maxPerKey: 2 },
    });
    const flooder = await limiter.acquire('flooder');
    const other = await limiter.acquire('other');
    const waiting = [limiter.acquire('flooder'), limiter.acquire('flooder')];
    const past = await limiter.acquire('flooder');
    expect(past).toMatchObject({ allowed: false, reason: 'queue-full', inFlight: 1 });
    // The flood took two places of ten: a client of another key still waits, and is served.
    const patient = limiter.acquire('other');
    expect(limiter.stats()).toEqual({ inFlight: 2, queued: 3 });
    await other.permit?.release();
    expect(await patient).toMatchObject({ allowed: true, key: 'other' });
    // The flooder's line moves in order as its permit comes back.
    await flooder.permit?.release();
    const first = await waiting[0];
    expect(first).toMatchObject({ allowed: true, key: 'flooder' });
    expect(limiter.stats().queued).toBe(1);
    // A place freed in its line takes one more of its requests.
    const third = limiter.acquire('flooder');
    expect(limiter.stats().queued).toBe(2);
    await first?.permit?.release();
    await (await waiting[1])?.permit?.release();
    expect(await third).toMatchObject({ allowed: true });
  });

  test('a metrics sink whose acquired throws loses no permit and fails no acquire: one warning', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const metrics = {
        limiter: () => ({
          decided: () => undefined,
          storeCall: () => undefined,
          storeError: () => undefined,
          storeUp: () => undefined,
          blockCacheHit: () => undefined,
          leaseCall: () => undefined,
          acquired: () => {
            throw new Error('sink down');
          },
        }),
      };
      const limiter = createConcurrencyLimiter({ max: 1, metrics, queue: { maxWaitMs: 60_000 } });
      const first = await limiter.acquire('k');
      expect(first).toMatchObject({ allowed: true, inFlight: 1 });
      expect(limiter.acquireSync('other')).toMatchObject({ allowed: true });
      // A waiter served at a release: the report throws inside the release.
      const waiting = limiter.acquire('k');
      await expect(first.permit?.release()).resolves.toBeUndefined();
      const served = await waiting;
      expect(served).toMatchObject({ allowed: true, waitedMs: expect.any(Number) });
      await served.permit?.release();
      expect(await limiter.inFlight('k')).toBe(0);
      expect(limiter.stats()).toEqual({ inFlight: 1, queued: 0 });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toContain('sink down');
    } finally {
      warn.mockRestore();
    }
  });

  test('a waiter whose signal aborts (its client left) is dropped and never takes a permit', async () => {
    const limiter = createConcurrencyLimiter({ max: 1, queue: { maxWaitMs: 60_000 } });
    const held = await limiter.acquire('k');
    const leaving = new AbortController();
    const gone = limiter.acquire('k', { signal: leaving.signal });
    const staying = limiter.acquire('k');
    await settle();
    leaving.abort();
    expect(await gone).toMatchObject({ allowed: false, reason: 'cancelled' });
    expect(limiter.stats().queued).toBe(1);
    await held.permit?.release();
    expect((await staying).allowed).toBe(true);
    expect(await limiter.inFlight('k')).toBe(1);
    const aborted = new AbortController();
    aborted.abort();
    expect(await limiter.acquire('k', { signal: aborted.signal })).toMatchObject({ reason: 'cancelled' });
  });

  test('a signal that is not an AbortSignal is refused at the call, before anything waits', async () => {
    const limiter = createConcurrencyLimiter({ max: 1, queue: { maxWaitMs: 50 } });
    const held = await limiter.acquire('k');
    const controller = new AbortController();
    for (const signal of [controller, {}, 'abort', 5]) {
      const error = errorOf(() => limiter.acquire('k', { signal: signal as never }));
      expect(error.option).toBe('signal');
    }
    expect(limiter.stats().queued).toBe(0);
    await held.permit?.release();
    expect(await limiter.inFlight('k')).toBe(0);
  });

  test('a waiter keeps the process alive until it is served or its maxWaitMs passes', async () => {
    const limiter = createConcurrencyLimiter({ max: 1, queue: { maxWaitMs: 60_000 } });
    const held = await limiter.acquire('k');
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const waiting = limiter.acquire('k');
    await settle();
    expect(timers()).toBe(before + 1);
    await held.permit?.release();
    await (await waiting).permit?.release();
    expect(timers()).toBe(before);
  });

  test("'limited' is reported for every refusal", async () => {
    const limiter = createConcurrencyLimiter({ max: 1 });
    const seen: ConcurrencyDecision[] = [];
    limiter.on('limited', (d) => seen.push(d));
    await limiter.acquire('k');
    await limiter.acquire('k');
    expect(seen.map((d) => d.reason)).toEqual(['limited']);
  });

  test.each([
    [{ max: 0 }, 'max', 'must be a whole number from 1'],
    [{ max: 1.5 }, 'max', 'must be a whole number from 1'],
    [{ max: '10' }, 'max', 'must be a whole number from 1'],
    [{}, 'max', 'is required'],
    [{ max: 1, leaseMs: 99 }, 'leaseMs', 'must be from 100 ms'],
    [{ max: 1, leaseMs: '50ms' }, 'leaseMs', 'must be from 100 ms'],
    [{ max: 1, leaseMs: '2d' }, 'leaseMs', 'to 1 day'],
    [{ max: 1, rate: '10r/s' }, 'rate', 'unknown option; accepted: max, store'],
    [{ max: 1, queue: { maxWaitMs: '1x' } }, 'queue.maxWaitMs', 'expected milliseconds'],
    [{ max: 1, queue: { maxWaitMs: 100, size: 3 } }, 'queue.size', 'unknown field'],
    [{ max: 1, queue: { maxWaitMs: 100, maxSize: 0 } }, 'queue.maxSize', 'whole number >= 1'],
    [
      { max: 1, queue: { maxWaitMs: 100, maxPerKey: 0 } },
      'queue.maxPerKey',
      'from 1 to queue.maxSize (1000)',
    ],
    [
      { max: 1, queue: { maxWaitMs: 100, maxSize: 10, maxPerKey: 11 } },
      'queue.maxPerKey',
      'from 1 to queue.maxSize (10)',
    ],
    [{ max: 1, queue: { maxWaitMs: 100, maxPerKey: '5' } }, 'queue.maxPerKey', 'whole number'],
    [{ max: 1, queue: { maxWaitMs: '11m' } }, 'queue.maxWaitMs', 'at most 10 minutes'],
    [{ max: 1, store: {} }, 'store', 'expected a store'],
    [{ max: 1, prefix: '' }, 'prefix', 'non-empty'],
    [{ max: 1, name: 'checkout\n' }, 'name', 'printable ASCII'],
    [{ max: 1, timeoutMs: 0 }, 'timeoutMs', 'from 1 to 60000'],
    [{ max: 1, onStoreError: 'ignore' }, 'onStoreError', "expected 'fail-open'"],
  ])('%j is refused at creation, naming %s', (options, option, accepted) => {
    const error = errorOf(() => createConcurrencyLimiter(options as never));
    expect(error.option).toBe(option);
    expect(error.message).toContain(accepted);
  });

  test('a key that is not a string is a programming error, thrown at the call', () => {
    const limiter = createConcurrencyLimiter({ max: 1 });
    expect(errorOf(() => limiter.acquire(42 as never)).option).toBe('key');
  });
});
