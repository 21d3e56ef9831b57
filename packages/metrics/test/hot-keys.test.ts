import { createLimiter } from '@sluice/core';
import { prometheus } from '@sluice/metrics';
import { Registry } from 'prom-client';
import { fakeClock } from '../../core/test/contract/fake-clock';
import { seededRandom } from '../../core/test/redis/seeded-random';
import { keyId } from '../src/hot-keys/key-id';
import { ADMITTED, LIMITED, SpaceSaving } from '../src/hot-keys/space-saving';

describe('hot keys', () => {
  test('metrics.hotKeys(name, n): the most requested keys with their admitted and limited counts', async () => {
    const clock = fakeClock();
    const metrics = prometheus({ registry: new Registry(), clock });
    const limiter = createLimiter({ name: 'per-sku', rate: '3/1m', metrics, clock });
    for (const [key, times] of [
      ['iphone-17', 10],
      ['switch-2', 4],
      ['ps6', 1],
    ] as const) {
      for (let i = 0; i < times; i++) await limiter.consume(key);
    }
    expect(metrics.hotKeys('per-sku', 2)).toEqual([
      { key: 'iphone-17', requests: 10, admitted: 3, delayed: 0, limited: 7, error: 0 },
      { key: 'switch-2', requests: 4, admitted: 3, delayed: 0, limited: 1, error: 0 },
    ]);
    expect(metrics.hotKeys('per-sku')).toHaveLength(3);
    expect(metrics.hotKeys('nobody')).toEqual([]);
  });

  test('Space-Saving bounds on a skewed stream of 200 000 distinct keys, 64 counters', () => {
    const random = seededRandom(7);
    const summary = new SpaceSaving(64);
    const truth = new Map<string, number>();
    const now = 1_700_000_000_000; // one instant: every request weighs 1, the counts are exact integers
    const n = 300_000;
    for (let i = 0; i < n; i++) {
      // A third of the traffic on 5 hot keys (Zipf-like), the rest on up to 200 000 cold ones.
      const r = random();
      const key =
        r < 1 / 3
          ? `hot-${Math.floor(1 / (random() * 0.8 + 0.2))}`
          : `cold-${Math.floor(random() * 200_000)}`;
      truth.set(key, (truth.get(key) ?? 0) + 1);
      summary.add(key, r < 0.5 ? ADMITTED : LIMITED, now);
    }
    const bound = summary.total(now) / summary.size;
    expect(summary.total(now)).toBe(n);
    const top = summary.top(64, now);
    expect(top).toHaveLength(64);
    for (const { key, requests, error, admitted, delayed, limited } of top) {
      const exact = truth.get(key) as number;
      expect(requests).toBeGreaterThanOrEqual(exact);
      expect(requests - error).toBeLessThanOrEqual(exact);
      expect(error).toBeLessThanOrEqual(bound);
      expect(admitted + delayed + limited).toBeCloseTo(requests - error, 6);
    }
    // Every key above total / size is listed, and the hot ones lead.
    const heavy = [...truth].filter(([, count]) => count > bound).map(([key]) => key);
    expect(heavy.length).toBeGreaterThan(0);
    for (const key of heavy) expect(top.map((k) => k.key)).toContain(key);
    expect(
      top
        .slice(0, heavy.length)
        .map((k) => k.key)
        .sort(),
    ).toEqual([...heavy].sort());
  });

  test('recent requests weigh most: a key hot ten minutes ago gives way to one hot now', () => {
    const clock = fakeClock();
    const summary = new SpaceSaving(8);
    for (let i = 0; i < 1000; i++) summary.add('yesterday', ADMITTED, clock());
    clock.advance(10 * 60_000);
    for (let i = 0; i < 50; i++) summary.add('now', ADMITTED, clock());
    const [first, second] = summary.top(2, clock());
    expect(first?.key).toBe('now');
    expect(first?.requests).toBeCloseTo(50, 6);
    // 1000 · e^(-10 min / 1 min)
    expect(second?.requests).toBeCloseTo(1000 * Math.exp(-10), 6);
    // A steady 10 requests a second reads as about 600, its requests over the last minute.
    const steady = new SpaceSaving(8);
    for (let s = 0; s < 30 * 60; s++) {
      for (let i = 0; i < 10; i++) steady.add('steady', ADMITTED, clock());
      clock.advance(1000);
    }
    expect(steady.top(1, clock())[0]?.requests).toBeGreaterThan(590);
    expect(steady.top(1, clock())[0]?.requests).toBeLessThan(610);
  });

  test('a clock stepped back (NTP, a restored VM) or broken leaves every count finite', () => {
    const summary = new SpaceSaving(8);
    const t = 1_700_006_400_000;
    summary.add('a', ADMITTED, t);
    summary.add('b', ADMITTED, t);
    summary.add('a', LIMITED, t - 13 * 3_600_000); // 13 hours back
    summary.add('c', ADMITTED, Number.NaN);
    summary.add('a', ADMITTED, t);
    for (const at of [t, t - 13 * 3_600_000, t + 60_000]) {
      const top = summary.top(3, at);
      expect(top.map((k) => k.key)).toEqual(['a', 'b', 'c']);
      for (const key of top)
        for (const value of [key.requests, key.admitted, key.limited, key.error])
          expect(Number.isFinite(value)).toBe(true);
      expect(Number.isFinite(summary.total(at))).toBe(true);
    }
  });

  test('long keys are counted under a bounded text: first 160 characters, length and hash', () => {
    const long = 'k'.repeat(15_000);
    const id = keyId(long);
    expect(id.length).toBeLessThan(200);
    expect(id).toMatch(/^k{160}… \(15000 chars, #[0-9a-f]{16}\)$/);
    expect(keyId(`${long}x`)).not.toBe(keyId(`${long}y`));
    expect(keyId('short')).toBe('short');
    const summary = new SpaceSaving(4);
    for (let i = 0; i < 3; i++) summary.add(long, ADMITTED, 0);
    expect(summary.top(1, 0)).toEqual([expect.objectContaining({ key: id, requests: 3 })]);
  });

  test('hot keys off: nothing kept', async () => {
    const metrics = prometheus({ registry: new Registry(), hotKeys: false });
    await createLimiter({ name: 'x', rate: '1r/s', metrics }).consume('k');
    expect(metrics.hotKeys('x')).toEqual([]);
  });
});
