import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CANDIDATES, LOADS, WORKLOADS } from '../src/overload/scenario';
import type { Results } from '../src/report/results';
import { runBench } from '../src/run';
import { FULL, type Settings } from '../src/settings';

// The overload section alone at tiny sizes (50 ms runs, one round), so it cannot rot: no
// thresholds, only that every candidate runs at every load and every goal is judged. The other
// sections' smoke test is smoke.test.ts.
const TINY: Settings = { ...FULL, sections: ['overload'], overloadSeconds: 0.05, overloadRounds: 1 };

describe('bench smoke: overload (tiny sizes, no thresholds)', () => {
  let dir: string;
  let results: Results;
  let report: string;

  beforeAll(async () => {
    process.env.BENCH_SILENT = '1';
    dir = mkdtempSync(join(tmpdir(), 'sluice-bench-overload-'));
    ({ results, report } = await runBench(TINY, dir));
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every candidate at every load on both workloads', () => {
    const overload = results.overload;
    expect(overload?.rows.length).toBe(WORKLOADS.length * LOADS.length * CANDIDATES.length);
    for (const row of overload?.rows ?? []) expect(row.offered).toBeGreaterThan(0);
    expect(overload?.capacity.cpu).toBeGreaterThan(0);
    expect(overload?.max.backend.high).toBe((overload?.max.backend.best ?? 0) * 4);
    expect(report).toContain('## Overload');
  });

  it('judges every overload goal', () => {
    const goals = results.goals.filter((goal) => goal.id.startsWith('overload-'));
    expect(goals).toHaveLength(15);
    for (const goal of goals) expect(typeof goal.met).toBe('boolean');
  });

  it('samples the adaptive limit, and measures its settling and the priorities', () => {
    const overload = results.overload;
    const adaptive = overload?.rows.filter((row) => row.candidate === 'adaptive') ?? [];
    expect(adaptive).toHaveLength(WORKLOADS.length * LOADS.length);
    for (const row of adaptive) expect(Array.isArray(row.samples)).toBe(true);
    expect(overload?.settle).toHaveLength(2);
    for (const run of overload?.settle ?? []) expect(run.samples.length).toBeGreaterThan(0);
    expect(overload?.priorities.map((row) => row.start)).toEqual(['serving', 'serving', 'cold', 'cold']);
    for (const row of overload?.priorities ?? []) expect(row.checkoutSent).toBeGreaterThan(0);
  });
});
