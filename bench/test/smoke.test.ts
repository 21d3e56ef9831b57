import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Results } from '../src/report/results';
import { hasCallgrind } from '../src/redis/instructions';
import { runBench } from '../src/run';
import { FULL, type Settings } from '../src/settings';

// Every section of the bench with tiny sizes and durations, so it cannot rot: no thresholds,
// only that each section runs end to end and reports every candidate and goal. It needs the
// workspace packages built (`pnpm test` builds first): the bench's child processes use them.
const TINY: Settings = {
  ...FULL,
  // The overload section has a smoke test of its own (overload-smoke.test.ts).
  sections: FULL.sections.filter((section) => section !== 'overload'),
  microRounds: 1,
  microMs: 5,
  microKeys: 1000,
  memoryKeys: 2000,
  httpRounds: 1,
  httpSeconds: 0.2,
  httpWarmupSeconds: 0.1,
  connections: 4,
  pipelining: 1,
  redisRounds: 1,
  redisMs: 50,
  redisCountDecisions: 50,
  replayLines: 2000,
};

describe('bench smoke (tiny sizes, no thresholds)', () => {
  let dir: string;
  let results: Results;
  let report: string;

  beforeAll(async () => {
    process.env.BENCH_SILENT = '1';
    dir = mkdtempSync(join(tmpdir(), 'sluice-bench-smoke-'));
    ({ results, report } = await runBench(TINY, dir));
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the machine and writes latest.json and latest.md', () => {
    expect(results.machine.cores).toBeGreaterThan(0);
    expect(results.machine.node).toBe(process.version);
    const written = JSON.parse(readFileSync(join(dir, 'latest.json'), 'utf8')) as Results;
    expect(written.goals.length).toBe(results.goals.length);
    expect(readFileSync(join(dir, 'latest.md'), 'utf8')).toBe(report);
    expect(report).toContain(results.machine.cpu);
  });

  it('judges every goal as met or not met', () => {
    expect(results.goals.length).toBeGreaterThanOrEqual(24);
    // The overload goals are judged by overload-smoke.test.ts: this run leaves that section out.
    for (const goal of results.goals.filter((g) => !g.id.startsWith('overload-')))
      expect(typeof goal.met).toBe('boolean');
    const ids = results.goals.map((goal) => goal.id);
    expect(ids).toContain('http-count-when-memory-admitted-express');
    expect(ids).toContain('redis-count-when-calls');
  });

  it('measures every micro candidate in both scenarios', () => {
    const ids = new Set(results.micro?.rows.map((row) => row.id));
    for (const id of [
      'floor',
      'sluice:gcra',
      'sluice:sliding-log',
      'rate-limiter-flexible',
      'express-rate-limit',
    ])
      expect(ids).toContain(id);
    for (const row of results.micro?.rows ?? []) expect(row.perSecond).toBeGreaterThan(0);
  });

  it('measures the heap of every store in its own process', () => {
    expect(results.memory?.rows.length).toBe(11);
    for (const row of results.memory?.rows ?? []) expect(Number.isFinite(row.bytesPerKey)).toBe(true);
    expect(results.memory?.rows.find((row) => row.id === 'sluice:gcra')?.held).toBe(TINY.memoryKeys);
  });

  // Lenient on purpose: on a busy machine sluice may decide a few requests without Redis (a
  // timeout sends them to its insurance store), which the full run reports as invalid.
  it('loads every HTTP variant and gets mostly the status of its path', () => {
    expect(results.http?.bare.map((row) => row.framework)).toEqual(['express', 'koa', 'fastify', 'hono']);
    expect(results.http?.rows.length).toBe(52);
    for (const row of results.http?.rows ?? []) {
      expect(row.rps).toBeGreaterThan(0);
      expect(row.statuses[row.path === 'admitted' ? '200' : '429']).toBeGreaterThan(0);
      expect(row.expectedShare).toBeGreaterThan(0.5);
    }
  });

  it('replays a generated access log twice, a fifth and all of it', () => {
    expect(results.replay?.rows.map((row) => row.lines)).toEqual([400, 2000]);
    for (const row of results.replay?.rows ?? []) {
      expect(row.linesPerSecond).toBeGreaterThan(0);
      expect(row.maxRssMb).toBeGreaterThan(0);
      expect(row.limited).toHaveLength(3);
    }
  });

  it('measures the cost of metrics: each framework with and without, the scrape, the hot keys', () => {
    const metrics = results.metrics;
    expect(metrics?.http.map((row) => row.framework)).toEqual(['express', 'koa', 'fastify']);
    for (const row of metrics?.http ?? []) expect(row.ratio).toBeGreaterThan(0);
    expect(metrics?.scrape.limiters).toBe(50);
    expect(metrics?.scrape.bytes).toBeGreaterThan(0);
    expect(Object.keys(metrics?.decideNs ?? {})).toHaveLength(4);
    expect(metrics?.hotKeys.manyKeys).toBe(TINY.memoryKeys);
    expect(report).toContain('## Metrics (`@sluice/metrics`)');
  });

  it('counts Redis commands per decision for every candidate', () => {
    // INCR, six algorithms, the sliding log at its wide limit, gcra with batch: false, the two
    // peers, the two-limit pair and countWhen's give-backs, at 1 and 256 in flight.
    expect(results.redis?.rows.length).toBe(28);
    for (const row of results.redis?.rows ?? []) expect(row.perSecond).toBeGreaterThan(0);
    const admitted = results.redis?.counts.filter((row) => row.scenario === 'admitted') ?? [];
    expect(admitted.length).toBe(14);
    for (const row of admitted) {
      expect(row.admittedShare).toBe(1);
      expect(Number.isFinite(row.sentPerDecision)).toBe(true);
      expect(Number.isFinite(row.executedPerDecision)).toBe(true);
    }
    const floods = results.redis?.counts.filter((c) => c.scenario === 'flood') ?? [];
    expect(floods.length).toBe(10);
    for (const row of floods) expect(row.admittedShare).toBeLessThan(0.5);
  });

  it('measures Redis time by batch size and the latency at 1 in flight, batching on and off', () => {
    const batching = results.redis?.batching;
    expect(batching?.sizes.map((s) => s.maxSize)).toEqual([1, 8, 64, 1, 8, 64, 1, 8, 64]);
    for (const size of batching?.sizes ?? []) expect(size.usecPerDecision).toBeGreaterThan(0);
    // Batches fill at 256 in flight: maxSize 64 carries far more than one decision per call.
    expect(batching?.sizes.find((s) => s.maxSize === 64)?.perCall).toBeGreaterThan(8);
    expect(batching?.latency.map((l) => l.batch)).toEqual([true, false]);
    for (const row of batching?.latency ?? []) expect(row.p99Us).toBeGreaterThan(0);
  });

  it('counts Redis instructions per decision with callgrind, or says valgrind is missing', () => {
    const batching = results.redis?.batching;
    if (!hasCallgrind()) {
      expect(batching?.instructions).toBeUndefined();
      expect(batching?.notes.join('\n')).toContain('not on PATH');
      return;
    }
    expect(batching?.instructions?.map((row) => row.name)).toEqual([
      'gcra admitted',
      'rlf admitted',
      'gcra b64 fresh',
      'gcra b64 state',
      'gcra b64 shared',
      'gcra b64 hot',
    ]);
    for (const row of batching?.instructions ?? []) {
      expect(row.perDecision).toBeGreaterThan(1000);
      expect(row.admitted).toBe(row.decisions);
    }
  });
});
