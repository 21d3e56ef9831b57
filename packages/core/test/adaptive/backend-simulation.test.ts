import { simulate, type SimulationResult } from './backend-simulation';

/**
 * Why Vegas is the default (see `createAdaptiveLimiter`): each algorithm in front of a backend
 * of 20 slots of 10 ms, clients arriving at 1×, 3× and 10× its capacity (30 simulated seconds,
 * the first 7.5 not measured). The figures in createAdaptiveLimiter's TSDoc are these runs'.
 */
const BACKEND = { slots: 20, serviceMs: 10, durationMs: 30_000 } as const;

const results = new Map<string, SimulationResult>();
const run = async (
  algorithm: 'vegas' | 'gradient2' | 'aimd',
  load: number,
  queued = false,
  slots: number = BACKEND.slots,
): Promise<SimulationResult> => {
  const name = `${algorithm} ${load}x${queued ? ' queue' : ''}${slots === BACKEND.slots ? '' : ` ${slots} slots`}`;
  let result = results.get(name);
  if (result === undefined) {
    // The default queue: { maxSize: 100, maxWaitMs: 50, targetMs: 5 }.
    result = await simulate({ ...BACKEND, slots, algorithm, load, ...(queued ? { queue: {} } : {}) });
    results.set(name, result);
  }
  return result;
};

describe('a backend of fixed capacity behind each algorithm', () => {
  test.each([3, 10])(
    'vegas at %dx: the limit near the 20 slots, full throughput, p99 under 2x the bare latency',
    async (load) => {
      const result = await run('vegas', load);
      expect(result.throughput).toBeGreaterThan(0.97);
      expect(result.p99Ms).toBeLessThan(2 * BACKEND.serviceMs);
      expect(result.meanLimit).toBeGreaterThan(BACKEND.slots);
      expect(result.meanLimit).toBeLessThan(1.5 * BACKEND.slots);
    },
  );

  test('vegas at 1x: throughput within 5 % of the capacity, latency close to bare', async () => {
    const result = await run('vegas', 1);
    expect(result.throughput).toBeGreaterThan(0.95);
    expect(result.p99Ms).toBeLessThan(2.5 * BACKEND.serviceMs);
  });

  test.each([3])(
    'gradient2 at %dx: as much throughput, the admitted wait longer than under vegas',
    async (load) => {
      const result = await run('gradient2', load);
      expect(result.throughput).toBeGreaterThan(0.97);
      expect(result.p99Ms).toBeGreaterThan((await run('vegas', load)).p99Ms * 1.5);
      expect(result.meanLimit).toBeGreaterThan(2 * BACKEND.slots);
    },
  );

  test('aimd at 3x: blind to a queue, it admits many times the capacity', async () => {
    const result = await run('aimd', 3);
    expect(result.meanLimit).toBeGreaterThan(10 * BACKEND.slots);
    expect(result.p99Ms).toBeGreaterThan(10 * BACKEND.serviceMs);
  });

  test('vegas at 3x on 4 slots: its queue target counts requests, so a small backend waits about twice its bare latency', async () => {
    const result = await run('vegas', 3, false, 4);
    expect(result.throughput).toBeGreaterThan(0.97);
    expect(result.meanLimit).toBeLessThan(2 * 4);
    expect(result.p99Ms).toBeLessThan(2.5 * BACKEND.serviceMs);
  });

  test('vegas at 3x on 1 slot (a CPU-bound handler): a queue of one or two requests, not five', async () => {
    const result = await run('vegas', 3, false, 1);
    expect(result.throughput).toBeGreaterThan(0.97);
    expect(result.meanLimit).toBeLessThan(3.5);
    expect(result.p99Ms).toBeLessThan(4 * BACKEND.serviceMs);
  });

  test('vegas at 3x on 100 slots: the limit within 15 % of them, p99 within 1.5x the bare latency', async () => {
    const result = await run('vegas', 3, false, 100);
    expect(result.throughput).toBeGreaterThan(0.97);
    expect(result.meanLimit).toBeLessThan(115);
    expect(result.p99Ms).toBeLessThan(1.5 * BACKEND.serviceMs);
  });

  test.each([3, 10])(
    'vegas at %dx with the default queue: refusals answered at arrival (p99 under 5 ms), throughput kept',
    async (load) => {
      const result = await run('vegas', load, true);
      expect(result.refusalP99Ms).toBeLessThanOrEqual(5);
      expect(result.throughput).toBeGreaterThan(0.97);
      expect(result.p99Ms).toBeLessThan(2.5 * BACKEND.serviceMs);
    },
  );

  afterAll(() => {
    // The table behind the choice, for whoever tunes it (`npx jest backend-simulation`).
    const rows = [...results].map(
      ([name, r]) =>
        `${name.padEnd(14)} throughput ${r.throughput.toFixed(3)}  p50 ${r.p50Ms.toFixed(1)} ms  p99 ${r.p99Ms.toFixed(1)} ms  mean limit ${r.meanLimit.toFixed(1)}  refused ${(r.refused * 100).toFixed(1)} %  refusal p99 ${r.refusalP99Ms.toFixed(1)} ms`,
    );
    if (process.env['SLUICE_SIMULATION_TABLE'] !== undefined) console.log(rows.join('\n'));
  });
});
