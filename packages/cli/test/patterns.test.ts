import { ALGORITHMS } from '@sluice/core';
import { generatePattern, PATTERN_EPOCH_MS, PATTERNS, type PatternOptions } from '../src/patterns/patterns';
import { replay } from '../src/replay/replay';

const base: PatternOptions = {
  name: 'steady',
  durationMs: 10_000,
  rps: 20,
  keys: 1,
  windowMs: 10_000,
  seed: 1,
};

function collect(options: PatternOptions): Array<[number, string]> {
  const requests: Array<[number, string]> = [];
  generatePattern(options, { request: (timeMs, key) => requests.push([timeMs - PATTERN_EPOCH_MS, key]) });
  return requests;
}

describe('generated patterns', () => {
  test('steady: evenly spaced, keys interleaved', () => {
    const requests = collect({ ...base, rps: 2, durationMs: 2000, keys: 2 });
    expect(requests).toEqual([
      [0, 'client-1'],
      [250, 'client-2'],
      [500, 'client-1'],
      [750, 'client-2'],
      [1000, 'client-1'],
      [1250, 'client-2'],
      [1500, 'client-1'],
      [1750, 'client-2'],
    ]);
  });

  test('steady at twice the rate: gcra admits exactly the rate, one every 100 ms', async () => {
    const result = await replay({
      input: { kind: 'pattern', name: 'steady', durationMs: 10_000, rps: 20 },
      policies: ['gcra 10r/s', 'leaky-bucket 10r/s burst=5'],
    });
    expect(result.requests).toBe(200);
    expect(result.policies.map(({ admitted, delayed, limited }) => [admitted, delayed, limited])).toEqual([
      [100, 0, 100],
      // The leaky bucket queues 5 beyond the rate and delays them: the first is admitted at once.
      [1, 104, 95],
    ]);
  });

  test('burst: every 10 s, 10 s of requests within 1 s', () => {
    const requests = collect({ ...base, name: 'burst', durationMs: 30_000, rps: 10 });
    expect(requests).toHaveLength(300);
    expect(requests.filter(([t]) => t % 10_000 >= 1000)).toEqual([]);
  });

  test('burst at a low rate keeps the mean: a request in every tenth burst at 0.01 r/s, not one in each', () => {
    for (const [rps, expected] of [
      [0.01, 10],
      [0.1, 100],
    ] as const) {
      const requests = collect({ ...base, name: 'burst', durationMs: 1_000_000, rps });
      expect([rps, requests.length]).toEqual([rps, expected]);
    }
    // One request's worth in all: the first at once, a second only if rounding brings it in.
    const one = collect({ ...base, name: 'burst', durationMs: 1_000_000, rps: 0.001 }).length;
    expect(one === 1 || one === 2).toBe(true);
  });

  test('boundary: the fixed window admits twice its limit around the attacked edge, the sliding log never more than its limit per window', async () => {
    const result = await replay({
      input: { kind: 'pattern', name: 'boundary', durationMs: 40_000, rps: 10, windowMs: 10_000 },
      policies: ALGORITHMS.map((algorithm) => `${algorithm} 100/10s`),
    });
    // A probe and 200 requests around 10 s; the same from 20 s around 30 s.
    expect(result.requests).toBe(402);
    const outcomes = Object.fromEntries(
      result.policies.map(({ label, admitted, delayed, limited }) => [label, [admitted, delayed, limited]]),
    );
    expect(outcomes).toEqual({
      'gcra 100/10s': [240, 0, 162],
      'token-bucket 100/10s': [240, 0, 162],
      'leaky-bucket 100/10s': [3, 237, 162],
      'fixed-window 100/10s': [400, 0, 2],
      'sliding-window 100/10s': [218, 0, 184],
      'sliding-log 100/10s': [202, 0, 200],
    });
    const admittedIn = (label: string, fromMs: number, toMs: number): number => {
      const series = result.policies.find((policy) => policy.label === label)?.series;
      if (series === undefined) throw new Error(`no policy ${label}`);
      return series
        .values(0, 100, PATTERN_EPOCH_MS + fromMs, (toMs - fromMs) / 100)
        .reduce((sum, n) => sum + n, 0);
    };
    expect(admittedIn('fixed-window 100/10s', 9000, 11_000)).toBeGreaterThanOrEqual(199);
    for (let from = 0; from <= 30_000; from += 1000) {
      expect(admittedIn('sliding-log 100/10s', from, from + 10_000)).toBeLessThanOrEqual(100);
    }
  });

  test('flash-sale: the same seed, the same traffic; a surge after a quarter; hot keys first', () => {
    const options: PatternOptions = {
      ...base,
      name: 'flash-sale',
      durationMs: 60_000,
      rps: 5,
      keys: 8,
      seed: 7,
    };
    const first = collect(options);
    expect(collect(options)).toEqual(first);
    expect(collect({ ...options, seed: 8 })).not.toEqual(first);
    const before = first.filter(([t]) => t < 15_000).length;
    const after = first.filter(([t]) => t >= 15_000 && t < 30_000).length;
    expect(after).toBeGreaterThan(5 * before);
    const perKey = (key: string) => first.filter(([, k]) => k === key).length;
    expect(perKey('client-1')).toBeGreaterThan(3 * perKey('client-8'));
  });

  test('every pattern comes out in time order', () => {
    for (const name of PATTERNS) {
      const times = collect({ ...base, name, keys: 3, durationMs: 30_000 }).map(([t]) => t);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }
  });
});
