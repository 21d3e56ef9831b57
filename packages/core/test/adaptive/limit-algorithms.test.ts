import { aimd } from '../../src/adaptive/aimd';
import { gradient2 } from '../../src/adaptive/gradient2';
import type { LimitAlgorithm, LimitSample, LimitState } from '../../src/adaptive/limit-algorithm';
import { vegas } from '../../src/adaptive/vegas';

const BOUNDS = { min: 1, max: 1000 };

/** Runs `algorithm` over scripted windows from `limit`; the limit after each. */
function run<S extends LimitState>(
  algorithm: LimitAlgorithm<S>,
  limit: number,
  windows: ReadonlyArray<Partial<LimitSample> & { rttMs: number }>,
): number[] {
  let state = algorithm.init(limit);
  return windows.map((window) => {
    // Busy by default: as many in flight as the limit (the backend, not the app, is the bound).
    state = algorithm.update(state, { inFlight: Math.ceil(state.limit), dropped: false, ...window }, BOUNDS);
    return state.limit;
  });
}

const repeat = <T>(n: number, item: T): T[] => Array.from({ length: n }, () => item);

describe.each([
  ['gradient2', gradient2],
  ['vegas', vegas],
] as const)('%s: the limit follows latency', (_, algorithm) => {
  test('grows while latency stays at its low', () => {
    const limits = run(algorithm as LimitAlgorithm<LimitState>, 20, repeat(30, { rttMs: 10 }));
    expect(limits.at(-1)).toBeGreaterThan(30);
  });

  test('shrinks when latency rises and stays high', () => {
    // Vegas's first probe (windows 11 and 12) measures the low latency; its next one is far off.
    const limits = run(algorithm as LimitAlgorithm<LimitState>, 100, [
      ...repeat(20, { rttMs: 10 }),
      ...repeat(60, { rttMs: 40 }),
    ]);
    const peak = limits[19] as number;
    expect(limits.at(-1)).toBeLessThan(peak * 0.6);
  });

  test('an app-limited window (less than half in flight) leaves the limit', () => {
    const limits = run(algorithm as LimitAlgorithm<LimitState>, 50, repeat(20, { rttMs: 10, inFlight: 5 }));
    // Never above where it was; back there after Vegas's probe (which cuts it for two windows).
    expect(Math.max(...limits)).toBe(50);
    expect(limits.at(-1)).toBe(50);
  });

  test('stays within min and max', () => {
    let state = (algorithm as LimitAlgorithm<LimitState>).init(5);
    for (let i = 0; i < 200; i++) {
      const rttMs = i % 50 < 25 ? 10 : 500;
      state = (algorithm as LimitAlgorithm<LimitState>).update(
        state,
        { rttMs, inFlight: 100, dropped: false },
        { min: 3, max: 40 },
      );
      expect(state.limit).toBeGreaterThanOrEqual(3);
      expect(state.limit).toBeLessThanOrEqual(40);
    }
  });
});

describe('vegas', () => {
  test('no queue grows the limit by 6·log10(limit); a drop shrinks it by log10(limit)', () => {
    expect(run(vegas, 100, [{ rttMs: 10 }, { rttMs: 10, dropped: true }])).toEqual([
      112,
      112 - Math.log10(112),
    ]);
  });

  test('grows only while the limit is used: at capacity with more than α of it unused, it stays', () => {
    // 40 allowed, 30 in flight at most (under 40 − 3·log10(40)): growing would only add queue later.
    expect(run(vegas, 40, repeat(5, { rttMs: 10, inFlight: 30 }))).toEqual(repeat(5, 40));
    const used = 40 - 3 * Math.log10(40);
    expect(run(vegas, 40, [{ rttMs: 10, inFlight: Math.ceil(used) }])[0]).toBeGreaterThan(40);
  });

  test('at light load the probe waits: a limit with more than α of it unused is not cut to a quarter', () => {
    // 20 allowed, at most 12 in flight (half the backend's capacity): nothing queued to drain.
    expect(run(vegas, 20, repeat(30, { rttMs: 10, inFlight: 12 }))).toEqual(repeat(30, 20));
  });

  test('a queue far above β cuts straight to limit × noLoadRtt / rtt + α', () => {
    // 50 allowed, latency 2.5 × the no-load one: 30 queued, β = 6·log10(50) ≈ 10.
    const limits = run(vegas, 50, [{ rttMs: 10 }, { rttMs: 25 }]);
    const first = limits[0] as number;
    expect(limits[1]).toBeCloseTo((first * 10) / 25 + 3 * Math.log10(first), 6);
  });

  test('a probe cuts the limit for two windows, then comes back measuring the no-load latency afresh', () => {
    // The first no-load latency (10 ms) is forgotten: the backend has got slower for good (20 ms).
    let state = vegas.init(40);
    state = vegas.update(state, { rttMs: 10, inFlight: 40, dropped: false }, BOUNDS);
    const before = state.limit;
    for (let i = 0; i < 1000; i++)
      state = vegas.update(state, { rttMs: 20, inFlight: 1, dropped: false }, BOUNDS); // app-limited: the limit stays
    expect(state).toMatchObject({ limit: before, untilProbe: 1 }); // due, but no probe while the limit is unused
    state = vegas.update(state, { rttMs: 20, inFlight: before, dropped: false }, BOUNDS);
    expect(state.probe).toEqual({ limit: before, windows: 2 });
    expect(state.limit).toBeLessThan(before);
    state = vegas.update(state, { rttMs: 30, inFlight: 20, dropped: false }, BOUNDS); // draining
    state = vegas.update(state, { rttMs: 20, inFlight: 20, dropped: false }, BOUNDS); // measuring
    expect(state).toMatchObject({ limit: before, noLoadRttMs: 20 });
    expect(state.probe).toBeUndefined();
  });

  test('a backend serving one request at a time (a CPU-bound handler): a queue of 2 kept, not 4', () => {
    // Each request in flight adds its 10 ms to the others' latency: the backend serves 1 without
    // a queue. Light load first (the no-load latency), then as many in flight as the limit.
    let state = vegas.init(20);
    const limits: number[] = [];
    for (let i = 0; i < 60; i++) {
      const inFlight = i < 5 ? 1 : Math.ceil(state.limit);
      state = vegas.update(state, { rttMs: 10 * inFlight, inFlight, dropped: false }, BOUNDS);
      limits.push(state.limit);
    }
    const settled = limits.slice(30);
    expect(Math.max(...settled)).toBeLessThanOrEqual(3);
    expect(Math.min(...settled)).toBeGreaterThanOrEqual(1);
  });

  /** Vegas at `limit` with `noLoadRttMs` measured, its probe due in the next window. */
  const dueAt = (limit: number, noLoadRttMs: number) => ({ limit, noLoadRttMs, untilProbe: 1 });

  test('a probe cuts to 3/4 of the requests the backend serves without a queue: 27 at 108 ms over a bare 80 ms → 15', () => {
    // 27 × 80 / 108 = 20 served without a queue (the backend's slots); a quarter (6.75) refused
    // what the drain did not need.
    const state = vegas.update(dueAt(27, 80), { rttMs: 108, inFlight: 27, dropped: false }, BOUNDS);
    expect(state.limit).toBeCloseTo(0.75 * 20, 6);
    expect(state.probe).toEqual({ limit: 27, windows: 2 });
  });

  test('a probe never cuts deeper than a quarter of the limit', () => {
    const state = vegas.update(dueAt(100, 10), { rttMs: 100, inFlight: 100, dropped: false }, BOUNDS);
    expect(state.limit).toBe(25);
  });

  test.each([
    ['clearly lower (a queued one was kept): the next probe comes after 10 windows', 30, 10],
    ['about the same: the next probe waits 30·√limit windows', 39, Math.round(30 * Math.sqrt(16))],
  ])('a probe that finds a latency %s', (_, found, untilProbe) => {
    let state = vegas.update(dueAt(16, 40), { rttMs: 42, inFlight: 16, dropped: false }, BOUNDS);
    state = vegas.update(state, { rttMs: 41, inFlight: 12, dropped: false }, BOUNDS); // draining
    state = vegas.update(state, { rttMs: found, inFlight: 12, dropped: false }, BOUNDS); // measuring
    expect(state).toMatchObject({ limit: 16, noLoadRttMs: found, untilProbe });
  });
});

describe('gradient2', () => {
  test('the long-run latency falls fast when latency drops to half', () => {
    let state = gradient2.init(50);
    for (let i = 0; i < 20; i++)
      state = gradient2.update(state, { rttMs: 100, inFlight: 50, dropped: false }, BOUNDS);
    const long = state.longRttMs;
    state = gradient2.update(state, { rttMs: 10, inFlight: 50, dropped: false }, BOUNDS);
    expect(state.longRttMs).toBeLessThan(long * 0.96);
  });
});

describe('aimd', () => {
  test('adds one per busy window, multiplies by 0.9 on a drop or a latency past 5 s', () => {
    expect(
      run(aimd, 10, [{ rttMs: 10 }, { rttMs: 10 }, { rttMs: 10, dropped: true }, { rttMs: 6000 }]),
    ).toEqual([11, 12, 12 * 0.9, 12 * 0.81]);
  });

  test('ignores latency below its timeout: it never sees a queue', () => {
    expect(run(aimd, 10, repeat(5, { rttMs: 4000 })).at(-1)).toBe(15);
  });
});
