import { createLimiter, type Decision, type LimiterOptions } from '../../src';
import { FAKE_EPOCH, fakeClock, type FakeClock } from '../contract/fake-clock';

let clock: FakeClock;
beforeEach(() => {
  clock = fakeClock();
});

const limiterOf = (options: LimiterOptions) => createLimiter({ clock, ...options });
const burstOf = async (options: LimiterOptions, n: number, key = 'k'): Promise<Decision[]> => {
  const limiter = limiterOf(options);
  const out: Decision[] = [];
  for (let i = 0; i < n; i++) out.push(await limiter.consume(key));
  return out;
};

describe('gcra: redis-cell CL.THROTTLE', () => {
  // CL.THROTTLE user123 15 30 60  →  max_burst 15, 30 per 60 s.
  const throttle: LimiterOptions = { algorithm: 'gcra', rate: { limit: 30, window: '60s' }, burst: 15 };

  test('README example: limit 16, remaining 15, allowed, retry -1 (0 here), reset after 2 s', async () => {
    const [d] = await burstOf(throttle, 1);
    expect(d).toMatchObject({
      allowed: true,
      limit: 16,
      remaining: 15,
      retryAfterMs: 0,
      resetMs: 2000,
      delayMs: 0,
    });
  });

  test('16 pass at once; the 17th waits one emission interval; reset after 16 intervals', async () => {
    const decisions = await burstOf(throttle, 17);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(16);
    expect(decisions[15]).toMatchObject({ remaining: 0, resetMs: 32_000 });
    expect(decisions[16]).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterMs: 2000,
      resetMs: 32_000,
    });
  });

  test('quantity is the cost; quantity 0 only looks', async () => {
    const limiter = limiterOf(throttle);
    expect(await limiter.consume('k', { cost: 10 })).toMatchObject({
      allowed: true,
      remaining: 6,
      resetMs: 20_000,
    });
    expect(await limiter.consume('k', { cost: 0 })).toMatchObject({
      allowed: true,
      remaining: 6,
      resetMs: 20_000,
    });
    expect(await limiter.consume('k', { cost: 7 })).toMatchObject({
      allowed: false,
      remaining: 6,
      retryAfterMs: 2000,
    });
  });

  test('a quantity above max_burst + 1 can never pass (redis-cell retry_after -1): finite, no retry', async () => {
    const limiter = limiterOf(throttle);
    expect(await limiter.consume('k', { cost: 17 })).toMatchObject({
      allowed: false,
      reason: 'cost-exceeds-capacity',
      retryAfterMs: 0,
      remaining: 16,
    });
  });

  test('fractional rate stays exact: 1 per 3 s refills at exactly 3000 ms', async () => {
    const limiter = limiterOf({ algorithm: 'gcra', rate: '20r/m' });
    expect((await limiter.consume('k')).allowed).toBe(true);
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 3000 });
    clock.advance(2999);
    expect((await limiter.consume('k')).allowed).toBe(false);
    clock.advance(1);
    expect((await limiter.consume('k')).allowed).toBe(true);
  });
});

describe('leaky-bucket: nginx limit_req', () => {
  test('rate=1r/s burst=5 nodelay admits 6 at once and rejects the 7th', async () => {
    const decisions = await burstOf({ algorithm: 'leaky-bucket', rate: '1r/s', burst: 5, nodelay: true }, 7);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, true, false]);
    expect(decisions.map((d) => d.delayMs)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(decisions.map((d) => d.remaining)).toEqual([5, 4, 3, 2, 1, 0, 0]);
    expect(decisions[6]).toMatchObject({ retryAfterMs: 1000, reason: 'limited' });
  });

  test('without nodelay the 2nd..6th are delayed 1..5 s and the 7th is rejected', async () => {
    const decisions = await burstOf({ algorithm: 'leaky-bucket', rate: '1r/s', burst: 5 }, 7);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, true, false]);
    expect(decisions.map((d) => d.delayMs)).toEqual([0, 1000, 2000, 3000, 4000, 5000, 0]);
  });

  test('burst=12 delay=8: nine pass at once, four are delayed, the rest rejected', async () => {
    const decisions = await burstOf({ algorithm: 'leaky-bucket', rate: '1r/s', burst: 12, delay: 8 }, 14);
    expect(decisions.map((d) => d.delayMs)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 1000, 2000, 3000, 4000, 0]);
    expect(decisions[13]?.allowed).toBe(false);
  });

  test('the bucket leaks at the rate: 6r/m lets one more through every 10 s', async () => {
    const limiter = limiterOf({ algorithm: 'leaky-bucket', rate: '6r/m' });
    expect((await limiter.consume('k')).allowed).toBe(true);
    clock.advance(5000);
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 5000 });
    clock.advance(5000);
    expect((await limiter.consume('k')).allowed).toBe(true);
  });

  test('a rejected request does not change the state', async () => {
    const limiter = limiterOf({ algorithm: 'leaky-bucket', rate: '1r/s', burst: 1, nodelay: true });
    await limiter.consume('k');
    await limiter.consume('k');
    for (let i = 0; i < 5; i++) {
      clock.advance(100);
      expect((await limiter.consume('k')).allowed).toBe(false);
    }
    clock.advance(500); // 1 s after the burst: exactly one unit has leaked
    expect((await limiter.consume('k')).allowed).toBe(true);
  });
});

describe('token-bucket: Spring Cloud Gateway RedisRateLimiter', () => {
  // replenishRate 10, burstCapacity 20  →  rate '10r/s', burst 19.
  const gateway: LimiterOptions = { algorithm: 'token-bucket', rate: '10r/s', burst: 19 };

  test('burstCapacity at once, then replenishRate per second', async () => {
    const limiter = limiterOf(gateway);
    for (let i = 0; i < 20; i++) expect((await limiter.consume('k')).allowed).toBe(true);
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 100 });
    clock.advance(1000);
    let admitted = 0;
    for (let i = 0; i < 15; i++) if ((await limiter.consume('k')).allowed) admitted++;
    expect(admitted).toBe(10);
  });

  test('requestedTokens is the cost; the bucket never fills past its capacity', async () => {
    const limiter = limiterOf(gateway);
    expect(await limiter.consume('k', { cost: 15 })).toMatchObject({
      allowed: true,
      remaining: 5,
      resetMs: 1500,
    });
    clock.advance(60_000);
    expect(await limiter.peek('k')).toMatchObject({ remaining: 20, resetMs: 0 });
    expect(await limiter.consume('k', { cost: 21 })).toMatchObject({
      allowed: false,
      reason: 'cost-exceeds-capacity',
    });
  });
});

describe('fixed-window', () => {
  test('the window opens at the first request and closes windowMs later', async () => {
    const limiter = limiterOf({ algorithm: 'fixed-window', rate: '3/1m' });
    clock.advance(12_345);
    for (let i = 0; i < 3; i++) expect((await limiter.consume('k')).allowed).toBe(true);
    clock.advance(10_000);
    expect(await limiter.consume('k')).toMatchObject({
      allowed: false,
      retryAfterMs: 50_000,
      resetMs: 50_000,
    });
    clock.advance(49_999);
    expect((await limiter.consume('k')).allowed).toBe(false);
    clock.advance(1);
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 2, resetMs: 60_000 });
  });
});

describe('sliding-window', () => {
  test('the previous window counts by the part of it still inside the sliding window', async () => {
    const limiter = limiterOf({ algorithm: 'sliding-window', rate: '10/1m' });
    for (let i = 0; i < 10; i++) expect((await limiter.consume('k')).allowed).toBe(true);
    clock.advance(60_000 + 30_000); // half-way through the next window: 10 × 0.5 = 5 still count
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.consume('k'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    // 10 × (60 000 − e) / 60 000 + 5 ≤ 9 once e ≥ 36 000: 6 s from now.
    expect(decisions[5]).toMatchObject({ retryAfterMs: 6000, remaining: 0 });
  });
});

describe('sliding-log', () => {
  test('ten requests in the same millisecond count as ten', async () => {
    const decisions = await burstOf({ algorithm: 'sliding-log', rate: '10/1m' }, 11);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions[10]).toMatchObject({ allowed: false, retryAfterMs: 60_000 });
  });

  test('rejected requests are not recorded; each unit leaves exactly windowMs after it came', async () => {
    const limiter = limiterOf({ algorithm: 'sliding-log', rate: '3/1m' });
    await limiter.consume('k');
    clock.advance(20_000);
    await limiter.consume('k');
    await limiter.consume('k');
    for (let i = 0; i < 20; i++) {
      clock.advance(1000);
      expect((await limiter.consume('k')).allowed).toBe(false);
    }
    clock.set(FAKE_EPOCH + 60_000 - 1);
    expect((await limiter.consume('k')).allowed).toBe(false);
    clock.advance(1);
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 0, retryAfterMs: 0 });
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 20_000 });
  });

  test("a request behind the log's newest entry (a clock stepped back) counts at that entry's time", async () => {
    const limiter = limiterOf({ algorithm: 'sliding-log', rate: '2/1m' });
    clock.set(FAKE_EPOCH + 100_000);
    await limiter.consume('k');
    // 70 s behind the log: decided and recorded at its newest time; waits told from its own clock.
    clock.set(FAKE_EPOCH + 30_000);
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 0, resetMs: 130_000 });
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 130_000 });
    // Both units count until 160 s, on the log's time: not the second one only until 90 s.
    clock.set(FAKE_EPOCH + 159_000);
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 1000 });
    clock.set(FAKE_EPOCH + 160_000);
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe('queue (Sentinel rate limiter / Guava acquire)', () => {
  test.each(['gcra', 'token-bucket'] as const)(
    '%s: 10 requests at once at 5r/s with maxWaitMs 1000 → 6 served 200 ms apart, 4 rejected',
    async (algorithm) => {
      const decisions = await burstOf({ algorithm, rate: '5r/s', queue: { maxWaitMs: 1000 } }, 10);
      expect(decisions.map((d) => (d.allowed ? d.delayMs : -1))).toEqual([
        0, 200, 400, 600, 800, 1000, -1, -1, -1, -1,
      ]);
      expect(decisions[6]).toMatchObject({ reason: 'limited', retryAfterMs: 200 });
    },
  );

  test('a queued turn is reserved: time passing serves the queue, not newcomers ahead of it', async () => {
    const limiter = limiterOf({ rate: '5r/s', queue: { maxWaitMs: '1s' } });
    for (let i = 0; i < 6; i++) await limiter.consume('k');
    clock.advance(400); // two turns have passed; four are still queued
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, delayMs: 800 });
  });

  test.each([
    [
      { algorithm: 'fixed-window', queue: { maxWaitMs: 10 } },
      /applies to algorithm 'gcra' or 'token-bucket'/,
    ],
    [{ algorithm: 'leaky-bucket', queue: { maxWaitMs: 10 } }, /queues with burst/],
    [{ queue: { maxWaitMs: 0 } }, /greater than 0/],
    [{ queue: { maxWaitMs: '11m' } }, /at most 600000/],
    [{ queue: { wait: 5 } }, /expected \{ maxWaitMs/],
  ])('%j is a SluiceConfigError', (options, message) => {
    expect(() => createLimiter({ rate: '5r/s', ...(options as object) })).toThrow(message);
  });
});
