import type { Limiter } from '../../src';
import type { FakeClock } from './fake-clock';

/**
 * Guava's published waits for `RateLimiter.create(2.0, 4000 ms)`: `acquire()` after `acquire()`,
 * each one called when the one before returned (0, 1.38, 1.13, 0.88, 0.63, 0.50 … s, to the ms).
 */
export const GUAVA_WAITS_MS = [0, 1375, 1125, 875, 625, 500, 500, 500];

/** A limiter's options that warm up as `create(2.0, 4 s)`, with room to queue every acquire. */
export const GUAVA_LIMIT = { rate: '2r/s', warmup: '4s', queue: { maxWaitMs: '1m' } } as const;

/** `acquire()` after `acquire()` on `key`: each decision's wait, the clock moved by it before the next. */
export async function acquireWaits(limiter: Limiter, clock: FakeClock, key: string): Promise<number[]> {
  const waits: number[] = [];
  for (let i = 0; i < GUAVA_WAITS_MS.length; i++) {
    const { delayMs } = await limiter.consume(key);
    waits.push(delayMs);
    clock.advance(delayMs);
  }
  return waits;
}
