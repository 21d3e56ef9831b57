import {
  createAdaptiveLimiter,
  SluiceConfigError,
  type AdaptiveDecision,
  type AdaptiveLimiter,
  type AdaptiveLimiterOptions,
} from '../../src';
import { errorOf } from '../contract/config-error-of';
import { fakeClock, type FakeClock } from '../contract/fake-clock';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A limiter on a fake clock, without the event-loop monitor (tests inject their own). */
function limiterOf(options: AdaptiveLimiterOptions = {}, clock: FakeClock = fakeClock(0)): AdaptiveLimiter {
  return createAdaptiveLimiter({ eventLoop: false, queue: false, clock, ...options });
}

function now(decision: AdaptiveDecision | Promise<AdaptiveDecision>): AdaptiveDecision {
  if (decision instanceof Promise) throw new Error('expected a decision at once');
  return decision;
}

/** Runs `rounds` rounds of `limit()` requests at once, each taking `rttMs`. */
function load(
  limiter: AdaptiveLimiter,
  clock: FakeClock,
  rounds: number,
  rttMs: (round: number) => number,
): void {
  for (let round = 0; round < rounds; round++) {
    const permits = [];
    for (let i = 0; i < limiter.limit(); i++) permits.push(now(limiter.acquire()).permit);
    clock.advance(rttMs(round));
    for (const permit of permits) permit?.release();
  }
}

describe('createAdaptiveLimiter', () => {
  afterEach(() => jest.useRealTimers());

  test('admits up to the limit, then refuses with a Retry-After estimate; a release frees one', () => {
    const limiter = limiterOf({ initial: 2 });
    const [a, b, c] = [now(limiter.acquire()), now(limiter.acquire()), now(limiter.acquire())];
    expect([a.allowed, b.allowed, c.allowed]).toEqual([true, true, false]);
    expect(c).toMatchObject({ partition: '*', limit: 2, inFlight: 2, reason: 'limited', waitedMs: 0 });
    expect(c.retryAfterMs).toBeGreaterThan(0);
    a.permit?.release();
    expect(limiter.inFlight()).toBe(1);
    expect(now(limiter.acquire()).allowed).toBe(true);
  });

  test('a permit goes back once: a second release does nothing', () => {
    const limiter = limiterOf({ initial: 2 });
    const a = now(limiter.acquire());
    now(limiter.acquire());
    a.permit?.release();
    a.permit?.release();
    expect(a.permit?.released).toBe(true);
    expect(limiter.inFlight()).toBe(1);
  });

  test('the limit grows while latency stays low, and shrinks when it rises', () => {
    const clock = fakeClock(0);
    const limiter = limiterOf({ initial: 10, windowMs: 10 }, clock);
    load(limiter, clock, 40, () => 10);
    const grown = limiter.limit();
    expect(grown).toBeGreaterThan(30);
    load(limiter, clock, 10, () => 50);
    expect(limiter.limit()).toBeLessThan(grown / 2);
  });

  test.each(['gradient2', 'aimd'] as const)('%s moves the limit too', (algorithm) => {
    const clock = fakeClock(0);
    const limiter = limiterOf({ algorithm, initial: 10, windowMs: 10 }, clock);
    load(limiter, clock, 40, () => 10);
    expect(limiter.limit()).toBeGreaterThan(10);
  });

  test('dropped requests shrink the limit (vegas); ignored ones are not measured', () => {
    const clock = fakeClock(0);
    const limiter = limiterOf({ initial: 50, max: 50, windowMs: 1 }, clock);
    load(limiter, clock, 3, () => 5);
    for (let i = 0; i < 10; i++) {
      const permits = Array.from({ length: 50 }, () => now(limiter.acquire()).permit);
      clock.advance(500);
      for (const permit of permits) permit?.release({ ignore: true });
      clock.advance(1000); // a latency that would shrink the limit, were it measured
    }
    expect(limiter.limit()).toBe(50);
    for (let i = 0; i < 5; i++) {
      const permits = Array.from({ length: limiter.limit() }, () => now(limiter.acquire()).permit);
      clock.advance(5);
      for (const permit of permits) permit?.release({ dropped: true });
    }
    expect(limiter.limit()).toBeLessThan(50);
  });

  test('stays within min and max', () => {
    const clock = fakeClock(0);
    const limiter = limiterOf({ initial: 10, min: 8, max: 12, windowMs: 1 }, clock);
    load(limiter, clock, 30, () => 10);
    expect(limiter.limit()).toBe(12);
    load(limiter, clock, 30, (round) => 10 * (round + 2));
    expect(limiter.limit()).toBe(8);
  });

  test('a lagging event loop halves the limit at once, down to min; a quiet one leaves it', () => {
    let report: (delayMs: number) => void = () => undefined;
    const stop = jest.fn();
    const limiter = createAdaptiveLimiter({
      initial: 40,
      min: 6,
      queue: false,
      eventLoop: {
        maxDelayMs: 30,
        monitor: (onSample) => {
          report = onSample;
          return stop;
        },
      },
    });
    const held = Array.from({ length: 40 }, () => now(limiter.acquire()).permit);
    report(10);
    expect(limiter.limit()).toBe(40);
    report(31);
    expect(limiter.limit()).toBe(20);
    for (const permit of held.splice(20)) permit?.release({ ignore: true });
    report(200); // at most one cut a window: none measured since the last
    expect(limiter.limit()).toBe(20);
    limiter.close();
    expect(stop).toHaveBeenCalledTimes(1);
  });

  test('event-loop lag does not cut an app-limited limit: under half of it in flight, the lag is not its doing', () => {
    let report: (delayMs: number) => void = () => undefined;
    const limiter = createAdaptiveLimiter({
      initial: 20,
      queue: false,
      eventLoop: { maxDelayMs: 30, monitor: (onSample) => ((report = onSample), () => undefined) },
    });
    report(200);
    report(200);
    expect(limiter.limit()).toBe(20); // idle: another process's load
    const held = Array.from({ length: 9 }, () => now(limiter.acquire()).permit);
    report(200);
    expect(limiter.limit()).toBe(20);
    held.push(now(limiter.acquire()).permit);
    report(200);
    expect(limiter.limit()).toBe(10);
    limiter.close();
  });

  test('after a lag cut, a window measured once per window: the next cut waits for a closed window', () => {
    const clock = fakeClock(0);
    let report: (delayMs: number) => void = () => undefined;
    const limiter = createAdaptiveLimiter({
      initial: 40,
      min: 1,
      max: 40,
      windowMs: 100,
      queue: false,
      clock,
      eventLoop: { maxDelayMs: 30, monitor: (onSample) => ((report = onSample), () => undefined) },
    });
    const held = Array.from({ length: 40 }, () => now(limiter.acquire()).permit);
    report(100);
    report(100);
    report(100);
    expect(limiter.limit()).toBe(20);
    clock.advance(100);
    for (const permit of held.splice(20)) permit?.release();
    clock.advance(100);
    for (const permit of held) permit?.release(); // a window closes, 100 ms after its first sample
    const again = Array.from({ length: limiter.limit() }, () => now(limiter.acquire()).permit);
    const before = limiter.limit();
    report(100);
    expect(limiter.limit()).toBe(Math.floor(before / 2));
    for (const permit of again) permit?.release({ ignore: true });
    limiter.close();
  });

  test('at a low limit a window closes on time with fewer than 10 samples: a slow backend recovers within windows, not 10 latencies', () => {
    const clock = fakeClock(0);
    const limiter = limiterOf({ initial: 1, min: 1, windowMs: 100 }, clock);
    load(limiter, clock, 5, () => 80); // 5 samples in 400 ms: before, a window waited for 10
    expect(limiter.limit()).toBeGreaterThan(1);
  });

  test('the default monitor reads perf_hooks and halves the limit when the loop is blocked', async () => {
    const limiter = createAdaptiveLimiter({
      initial: 40,
      queue: false,
      eventLoop: { maxDelayMs: 20, sampleMs: 50 },
    });
    const held = Array.from({ length: 40 }, () => now(limiter.acquire()).permit);
    try {
      await new Promise((resolve) => setTimeout(resolve, 60));
      const blockedUntil = Date.now() + 120;
      while (Date.now() < blockedUntil); // the event loop lags 120 ms
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect(limiter.limit()).toBeLessThan(40);
    } finally {
      for (const permit of held) permit?.release({ ignore: true });
      limiter.close();
    }
  });

  describe('shares', () => {
    const SHARES = { checkout: 0.7, browse: 0.3 };

    test('a partition alone borrows the whole limit', () => {
      const limiter = limiterOf({ initial: 10, shares: SHARES });
      const browse = Array.from({ length: 11 }, () => now(limiter.acquire('browse')));
      expect(browse.filter((d) => d.allowed)).toHaveLength(10);
      expect(limiter.stats().partitions['browse']).toMatchObject({ limit: 3, inFlight: 10, shed: 1 });
    });

    test('under overload each partition gets back to its share: the borrower is refused until it has', () => {
      const clock = fakeClock(0);
      const limiter = limiterOf({ initial: 10, shares: SHARES }, clock);
      const browse = Array.from({ length: 10 }, () => now(limiter.acquire('browse')));
      // Checkout asks: refused while browse holds all, and from then on browse borrows none of its share.
      expect(now(limiter.acquire('checkout')).reason).toBe('limited');
      for (let i = 0; i < 7; i++) {
        browse[i]?.permit?.release();
        expect(now(limiter.acquire('browse')).allowed).toBe(false);
        expect(now(limiter.acquire('checkout')).allowed).toBe(true);
      }
      expect(limiter.stats().partitions).toMatchObject({
        checkout: { inFlight: 7, limit: 7 },
        browse: { inFlight: 3, limit: 3 },
      });
      // Within its own share, browse is admitted as soon as one of its permits comes back.
      browse[7]?.permit?.release();
      expect(now(limiter.acquire('browse')).allowed).toBe(true);
    });

    test('once the other partition has not asked for a while, its share is lent again', () => {
      const clock = fakeClock(0);
      const limiter = limiterOf({ initial: 10, shares: SHARES }, clock);
      const browse = Array.from({ length: 10 }, () => now(limiter.acquire('browse')));
      now(limiter.acquire('checkout'));
      browse[0]?.permit?.release();
      expect(now(limiter.acquire('browse')).allowed).toBe(false);
      clock.advance(1001);
      expect(now(limiter.acquire('browse')).allowed).toBe(true);
    });

    test('a borrower leaves a partition in use room to grow by half its requests in flight, without a refusal', () => {
      const clock = fakeClock(0);
      const limiter = limiterOf({ initial: 20, shares: SHARES }, clock);
      const checkout = Array.from({ length: 4 }, () => now(limiter.acquire('checkout')));
      expect(checkout.every((d) => d.allowed)).toBe(true);
      // 20 − 4 in flight − 2 kept for checkout (half of 4): browse borrows 14 (6 its own).
      const browse = Array.from({ length: 20 }, () => now(limiter.acquire('browse')));
      expect(browse.filter((d) => d.allowed)).toHaveLength(14);
      expect(now(limiter.acquire('checkout')).allowed).toBe(true);
      expect(now(limiter.acquire('checkout')).allowed).toBe(true);
      expect(limiter.stats().partitions['checkout']).toMatchObject({ inFlight: 6, shed: 0 });
    });

    test("unlisted names share the partition '*', guaranteed what the shares leave", () => {
      const limiter = limiterOf({ initial: 10, shares: { checkout: 0.5 } });
      expect(now(limiter.acquire('admin')).partition).toBe('*');
      expect(now(limiter.acquire()).partition).toBe('*');
      expect(limiter.stats().partitions).toMatchObject({
        checkout: { limit: 5 },
        '*': { limit: 5, inFlight: 2 },
      });
    });
  });

  describe('queue', () => {
    test('waits above the limit, first come first served, and refuses past maxWaitMs', async () => {
      jest.useFakeTimers();
      const clock = fakeClock(0);
      const limiter = limiterOf({ initial: 1, queue: { maxWaitMs: 40, targetMs: 40 } }, clock);
      const first = now(limiter.acquire());
      const second = limiter.acquire();
      const third = limiter.acquire();
      expect(second).toBeInstanceOf(Promise);
      clock.advance(3);
      first.permit?.release();
      const admitted = await second;
      expect(admitted).toMatchObject({ allowed: true, waitedMs: 3 });
      clock.advance(40);
      jest.advanceTimersByTime(40);
      expect(await third).toMatchObject({ allowed: false, reason: 'queue-timeout', waitedMs: 43 });
    });

    test('a queue that stands longer than targetMs is overload: arrivals refused at once, newest waiter served first, old ones refused', async () => {
      jest.useFakeTimers();
      const clock = fakeClock(0);
      const limiter = limiterOf({ initial: 1, queue: { maxWaitMs: 1000, targetMs: 5 } }, clock);
      const held = now(limiter.acquire());
      const old = limiter.acquire();
      clock.advance(4);
      const newer = limiter.acquire();
      const newest = limiter.acquire();
      clock.advance(2); // the oldest waiter has waited 6 ms: the queue stands
      expect(now(limiter.acquire())).toMatchObject({ allowed: false, reason: 'overloaded', waitedMs: 0 });
      expect(await old).toMatchObject({ allowed: false, reason: 'overloaded', waitedMs: 6 });
      held.permit?.release();
      expect(await newest).toMatchObject({ allowed: true });
      expect(limiter.stats().queued).toBe(1);
      void newer;
    });

    test('a waiter not served within targetMs is refused then, without waiting for an arrival or a release until maxWaitMs', async () => {
      jest.useFakeTimers();
      const clock = fakeClock(0);
      const limiter = limiterOf({ initial: 1, queue: { maxWaitMs: 1000, targetMs: 5 } }, clock);
      const held = now(limiter.acquire());
      const waiting = limiter.acquire();
      clock.advance(6);
      jest.advanceTimersByTime(6);
      expect(await waiting).toMatchObject({ allowed: false, reason: 'overloaded', waitedMs: 6 });
      held.permit?.release();
    });

    test('a waiter served within targetMs is not refused: a short burst is absorbed', async () => {
      jest.useFakeTimers();
      const clock = fakeClock(0);
      const limiter = limiterOf({ initial: 1, queue: { maxWaitMs: 1000, targetMs: 5 } }, clock);
      const held = now(limiter.acquire());
      const waiting = limiter.acquire();
      clock.advance(4);
      jest.advanceTimersByTime(4);
      held.permit?.release();
      expect(await waiting).toMatchObject({ allowed: true, waitedMs: 4 });
    });

    test('overload lasts while arrivals are refused for it: the queue does not form again until 20 x targetMs pass without one', async () => {
      jest.useFakeTimers();
      const clock = fakeClock(0);
      const limiter = limiterOf({ initial: 1, queue: { maxWaitMs: 1000, targetMs: 5 } }, clock);
      now(limiter.acquire());
      const old = limiter.acquire();
      clock.advance(6);
      expect(now(limiter.acquire()).reason).toBe('overloaded');
      expect(await old).toMatchObject({ reason: 'overloaded' });
      for (let i = 0; i < 10; i++) {
        clock.advance(90); // each refusal keeps the overload another 100 ms
        expect(now(limiter.acquire()).reason).toBe('overloaded');
      }
      clock.advance(100);
      const queued = limiter.acquire();
      expect(queued).toBeInstanceOf(Promise);
      limiter.close();
      expect(await queued).toMatchObject({ reason: 'cancelled' });
    });

    test('a full queue refuses at once; an aborted waiter leaves it', async () => {
      const limiter = limiterOf({ initial: 1, queue: { maxSize: 1, maxWaitMs: 1000, targetMs: 1000 } });
      now(limiter.acquire());
      const controller = new AbortController();
      const waiting = limiter.acquire(undefined, { signal: controller.signal });
      expect(now(limiter.acquire())).toMatchObject({ allowed: false, reason: 'queue-full' });
      controller.abort();
      expect(await waiting).toMatchObject({ allowed: false, reason: 'cancelled' });
      expect(limiter.stats().queued).toBe(0);
      limiter.close();
    });

    test('close() refuses every waiter', async () => {
      const limiter = limiterOf({ initial: 1, queue: { maxWaitMs: 1000 } });
      now(limiter.acquire());
      const waiting = limiter.acquire();
      limiter.close();
      expect(await waiting).toMatchObject({ allowed: false, reason: 'cancelled' });
      await settle();
    });
  });

  test('dryRun: a request over the limit gets a permit, counted, in a decision that says it would be refused', () => {
    const limiter = limiterOf({ initial: 1 });
    now(limiter.acquire());
    const over = now(limiter.acquire(undefined, { dryRun: true }));
    expect(over).toMatchObject({ allowed: false, reason: 'limited', inFlight: 2 });
    over.permit?.release();
    expect(limiter.inFlight()).toBe(1);
  });

  test('dryRun with a queue: where it would have waited it is admitted; where it would have been refused, reported so', async () => {
    const clock = fakeClock(0);
    const limiter = limiterOf({ initial: 1, queue: { maxSize: 1, maxWaitMs: 1000, targetMs: 5 } }, clock);
    now(limiter.acquire());
    expect(now(limiter.acquire(undefined, { dryRun: true }))).toMatchObject({ allowed: true, inFlight: 2 });
    const waiting = limiter.acquire(); // fills the queue
    expect(now(limiter.acquire(undefined, { dryRun: true }))).toMatchObject({
      allowed: false,
      reason: 'queue-full',
      inFlight: 3,
    });
    limiter.close();
    expect(await waiting).toMatchObject({ reason: 'cancelled' });
  });

  test.each([
    [{ algorithm: 'bbr' }, 'algorithm'],
    [{ min: 0 }, 'min'],
    [{ min: 5, max: 4 }, 'max'],
    [{ initial: 2000 }, 'initial'],
    [{ shares: { a: 0.7, b: 0.5 } }, 'shares'],
    [{ shares: { a: 0 } }, 'shares.a'],
    [{ shares: { '*': 0.5 } }, 'shares.*'],
    [{ shares: {} }, 'shares'],
    [{ queue: { maxWaitMs: 10, targetMs: 20 } }, 'queue.targetMs'],
    [{ queue: { maxWait: 10 } }, 'maxWait'],
    [{ eventLoop: { maxDelayMs: 0 } }, 'eventLoop.maxDelayMs'],
    [{ windowMs: 1.5 }, 'windowMs'],
    [{ name: '' }, 'name'],
    [{ metrics: {} }, 'metrics'],
    [{ shared: 1 }, 'shared'],
  ])('%j: SluiceConfigError naming %s', (options, option) => {
    const error = errorOf(() => createAdaptiveLimiter(options as AdaptiveLimiterOptions));
    expect(error).toBeInstanceOf(SluiceConfigError);
    expect(error.option).toBe(option);
  });
});
