import { SluiceConfigError } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { warmUp, type WarmUpState } from '../../src/algorithms/warm-up';
import { fakeClock } from '../contract/fake-clock';
import { acquireWaits, GUAVA_LIMIT, GUAVA_WAITS_MS } from '../contract/guava-warm-up';

describe('warm-up: Guava SmoothWarmingUp', () => {
  test('RateLimiter.create(2.0, 4000 ms): acquire() waits 0, 1.38, 1.13, 0.88, 0.63, 0.50, 0.50, 0.50 s', () => {
    const policy = resolvePolicy({ rate: '2r/s', warmup: '4s', queue: { maxWaitMs: '10m' } });
    let state: WarmUpState | undefined;
    let now = 1_700_006_400_000;
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const step = warmUp.step(state, policy, now, 1);
      expect(step.verdict.allowed).toBe(true);
      waits.push(step.verdict.delayMs);
      state = step.state;
      now += step.verdict.delayMs; // acquire() returns after its wait: the next call comes then
    }
    const guava = [0, 1.38, 1.13, 0.88, 0.63, 0.5, 0.5, 0.5].map((s) => s * 1000);
    waits.forEach((w, i) => expect(Math.abs(w - (guava[i] as number))).toBeLessThanOrEqual(5));
    expect(waits).toEqual([0, 1375, 1125, 875, 625, 500, 500, 500]);
  });

  test('without a queue a request waits for nothing: it passes only when its turn has come', () => {
    const policy = resolvePolicy({ rate: '2r/s', warmup: '4s' });
    const first = warmUp.step(undefined, policy, 0, 1);
    expect(first.verdict).toMatchObject({ allowed: true, delayMs: 0, resetMs: 1375 });
    const second = warmUp.step(first.state, policy, 1000, 1);
    expect(second.verdict).toMatchObject({ allowed: false, retryAfterMs: 375, reason: 'limited' });
    expect(warmUp.step(first.state, policy, 1375, 1).verdict.allowed).toBe(true);
  });

  test('idle time cools the key down again; its state is forgotten once fully cold', () => {
    const policy = resolvePolicy({ rate: '2r/s', warmup: '4s', queue: { maxWaitMs: '1m' } });
    let state: WarmUpState | undefined;
    let now = 0;
    for (let i = 0; i < 12; i++) {
      const step = warmUp.step(state, policy, now, 1);
      state = step.state;
      now += step.verdict.delayMs;
    }
    expect(warmUp.step(state, policy, now, 1).verdict.delayMs).toBe(500); // warm: the full rate
    const last = warmUp.step(state, policy, now, 1);
    const cold = warmUp.step(last.state, policy, now + last.ttlMs, 1);
    const fresh = warmUp.step(undefined, policy, now + last.ttlMs, 1);
    expect(cold.verdict).toEqual(fresh.verdict);
    expect(cold.state?.stored).toBeCloseTo(fresh.state?.stored as number, 9);
  });

  test.each([
    [{ algorithm: 'fixed-window', rate: '5/1s', warmup: '1s' }, 'warmup'],
    [{ rate: '5r/s', burst: 3, warmup: '1s' }, 'burst'],
    [{ rate: '5r/s', warmup: 'soon' }, 'warmup'],
  ])('%j is a SluiceConfigError on %s', (options, option) => {
    expect(() => resolvePolicy(options as never)).toThrow(SluiceConfigError);
    expect(() => resolvePolicy(options as never)).toThrow(new RegExp(`^${option} `));
  });
});

describe('warmup through createLimiter', () => {
  test('the Guava sequence through a limiter on the memory store', async () => {
    const { createLimiter } = await import('../../src');
    const clock = fakeClock();
    const limiter = createLimiter({ ...GUAVA_LIMIT, clock });
    expect(await acquireWaits(limiter, clock, 'sale')).toEqual(GUAVA_WAITS_MS);
    // another key is cold on its own
    expect((await limiter.consume('other')).delayMs).toBe(0);
    expect((await limiter.consume('other')).delayMs).toBe(1375);
  });
});
