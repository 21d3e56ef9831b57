import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runHttp, type HttpResult } from './http/http';
import { describeMachine, machineLine } from './machine';
import { runMemory, type MemoryResult } from './memory/memory';
import { runMetrics, type MetricsResult } from './metrics/metrics';
import { runMicro, type MicroResult } from './micro/micro';
import { progress } from './progress';
import { runRedisApart, type RedisResult } from './redis/redis';
import { startRedis } from './redis/redis-server';
import { runReplayBench, type ReplayResult } from './replay/replay-bench';
import { judgeGoals } from './report/goals';
import { markdown } from './report/markdown';
import type { Results } from './report/results';
import type { Settings } from './settings';

/** Where `pnpm bench` writes `latest.json` and `latest.md`. */
export const RESULTS_DIR = join(__dirname, '..', 'results');

/**
 * Runs the selected sections in order (micro, memory, http, redis, replay) with one redis-server of its
 * own (pinned to cpu 1 beside the load generator when pinning is possible), judges the goals and
 * writes `latest.json` and `latest.md` to `resultsDir`.
 */
export async function runBench(
  settings: Settings,
  resultsDir = RESULTS_DIR,
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
  const results: Results = {
    machine,
    date: new Date().toISOString(),
    durationSeconds: Math.round((performance.now() - started) / 100) / 10,
    settings,
    goals: judgeGoals(sections),
    ...sections,
  };
  const report = markdown(results);
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(resultsDir, 'latest.md'), report);
  progress('done', `${join(resultsDir, 'latest.md')} and latest.json written`);
  return { results, report };
}
