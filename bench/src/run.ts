import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runHttp, type HttpResult } from './http/http';
import { describeMachine, machineLine } from './machine';
import { runMemory, type MemoryResult } from './memory/memory';
import { runMetrics, type MetricsResult } from './metrics/metrics';
import { runMicro, type MicroResult } from './micro/micro';
import { runOverload, type OverloadResult } from './overload/overload';
import { overloadGoals } from './overload/overload-goals';
import { progress } from './progress';
import { runRedisApart, type RedisResult } from './redis/redis';
import { startRedis } from './redis/redis-server';
import { runReplayBench, type ReplayResult } from './replay/replay-bench';
import { judgeGoals } from './report/goals';
import { markdown } from './report/markdown';
import type { OverloadResults, Results } from './report/results';
import { FULL, type Settings } from './settings';

/** Where `pnpm bench` writes `latest.json` and `latest.md`: the full run's figures, committed. */
export const RESULTS_DIR = join(__dirname, '..', 'results');

/**
 * Where a partial run (`BENCH_QUICK=1`, `BENCH_SECTIONS`, any knob changed) writes instead, so it
 * never replaces the full run's figures that the README quotes (git-ignored).
 */
export const PARTIAL_RESULTS_DIR = join(RESULTS_DIR, 'partial');

/**
 * Where a run of the overload section at its full size writes that section alone (however the
 * other sections ran): the guide's figures and charts come from it, so the section can be run
 * and its docs refreshed without the whole bench.
 */
export const OVERLOAD_RESULTS = join(RESULTS_DIR, 'overload.json');

/** Whether the overload section's settings are the full run's. */
export function isFullOverload(settings: Settings): boolean {
  return settings.overloadSeconds === FULL.overloadSeconds && settings.overloadRounds === FULL.overloadRounds;
}

/** Whether the settings are the full run's. */
export function isFullRun(settings: Settings): boolean {
  return JSON.stringify(settings) === JSON.stringify(FULL);
}

/**
 * Runs the selected sections in order (micro, memory, http, redis, replay, metrics, overload) with one redis-server of its
 * own (pinned to cpu 1 beside the load generator when pinning is possible), judges the goals and
 * writes `latest.json` and `latest.md` to `resultsDir` (by default `results/` for the full run,
 * `results/partial/` for any other).
 */
export async function runBench(
  settings: Settings,
  resultsDir = isFullRun(settings) ? RESULTS_DIR : PARTIAL_RESULTS_DIR,
): Promise<{ results: Results; report: string }> {
  const started = performance.now();
  const machine = describeMachine();
  progress('machine', machineLine(machine));
  progress('sections', settings.sections.join(', '));
  const wants = (name: Settings['sections'][number]) => settings.sections.includes(name);
  const sections: {
    micro?: MicroResult;
    memory?: MemoryResult;
    http?: HttpResult;
    redis?: RedisResult;
    replay?: ReplayResult;
    metrics?: MetricsResult;
    overload?: OverloadResult;
  } = {};
  if (wants('micro')) sections.micro = await runMicro(settings);
  if (wants('memory')) sections.memory = await runMemory(settings);
  if (wants('http') || wants('redis')) {
    const redis = await startRedis(machine.pinning ? { cpu: 1 } : {});
    progress('redis-server', `pid ${redis.pid}, port ${redis.port}`);
    try {
      if (wants('http')) sections.http = await runHttp(settings, redis.port, machine.pinning);
      if (wants('redis')) sections.redis = await runRedisApart(settings, redis.port, machine.pinning);
    } finally {
      await redis.stop();
    }
  }
  if (wants('replay')) sections.replay = await runReplayBench(settings);
  if (wants('metrics')) sections.metrics = await runMetrics(settings, machine.pinning);
  if (wants('overload')) {
    const started = performance.now();
    const overload = await runOverload(settings);
    sections.overload = overload;
    // Not from a test's own directory (the smoke test's tiny sizes are never full anyway).
    const ownDir = resultsDir === RESULTS_DIR || resultsDir === PARTIAL_RESULTS_DIR;
    if (isFullOverload(settings) && ownDir) {
      const own: OverloadResults = {
        machine,
        date: new Date().toISOString(),
        durationSeconds: Math.round((performance.now() - started) / 100) / 10,
        goals: overloadGoals(overload),
        overload,
      };
      writeFileSync(OVERLOAD_RESULTS, `${JSON.stringify(own, null, 2)}\n`);
      progress('overload', `${OVERLOAD_RESULTS} written`);
    }
  }
  const results: Results = {
    machine,
    date: new Date().toISOString(),
    durationSeconds: Math.round((performance.now() - started) / 100) / 10,
    settings,
    goals: judgeGoals(sections),
    ...sections,
  };
  const report = isFullRun(settings)
    ? markdown(results)
    : `> Partial run (BENCH_QUICK, BENCH_SECTIONS or a knob changed): not the full \`pnpm bench\` figures.\n\n${markdown(results)}`;
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(resultsDir, 'latest.md'), report);
  progress('done', `${join(resultsDir, 'latest.md')} and latest.json written`);
  return { results, report };
}
