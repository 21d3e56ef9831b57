// The Node side of sluice's Redis path, in process, without HTTP: IN_FLIGHT callers (1000, as
// autocannon's 100 connections × 10 pipelined requests) each asking `limiter.consume` of one hot
// key again as soon as answered, on a redis-server of its own (cpu 1 when pinned). Prints
// decisions/s and this process's CPU and GC time per decision, median of rounds, interleaved
// between builds; RP_HEAP=1 prints the bytes allocated per decision by function instead (run
// with --no-turbo-inlining to see inlined functions apart). Writes nothing to results/.
//   cd bench && taskset -c 0 npx tsx src/http/redis-path.ts
//   RP_BUILDS="before=/abs/dist-copy/index.cjs;after=../packages/core/dist/index.cjs": builds to compare
//   (a copy must sit inside the repository, e.g. packages/core/.dist-before, to find its dependencies)
import { Session } from 'node:inspector/promises';
import { PerformanceObserver } from 'node:perf_hooks';
import { resolve } from 'node:path';
import Redis from 'ioredis';
import type * as Core from '@sluice/core';
import { hasTaskset } from '../machine';
import { startRedis } from '../redis/redis-server';

const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 1000);
const MS = Number(process.env.RP_MS ?? 1500);
const ROUNDS = Number(process.env.RP_ROUNDS ?? 5);
/** Bytes each caller holds while it waits, as a request's objects would. */
const HELD = 64;

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

interface Run {
  readonly rate: number;
  readonly cpuUs: number;
  readonly gcUs: number;
  readonly decisions: number;
}

async function closedLoop(one: () => Promise<unknown>): Promise<Run> {
  let done = 0;
  let stop = false;
  const cpu0 = process.cpuUsage();
  const gc0 = gcMs;
  const t0 = performance.now();
  const caller = async (): Promise<void> => {
    while (!stop) {
      const held = new Array<object>(HELD).fill({});
      await one();
      done += held.length > 0 ? 1 : 0;
    }
  };
  const callers = Array.from({ length: IN_FLIGHT }, caller);
  await new Promise((resolve) => setTimeout(resolve, MS));
  stop = true;
  const decisions = done;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await Promise.all(callers);
  return {
    rate: decisions / seconds,
    cpuUs: (cpu.user + cpu.system) / decisions,
    gcUs: ((gcMs - gc0) * 1000) / decisions,
    decisions,
  };
}

/** Bytes allocated per decision by function, from V8's sampling heap profiler (collected objects included). */
async function allocations(one: () => Promise<unknown>): Promise<void> {
  const session = new Session();
  session.connect();
  await closedLoop(one);
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  const run = await closedLoop(one);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: ProfileNode };
  };
  const bySite = new Map<string, number>();
  const walk = (node: ProfileNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const site = `${functionName || '(anonymous)'} ${url.split('/').at(-1) ?? ''}:${lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const total = [...bySite.values()].reduce((sum, bytes) => sum + bytes, 0);
  console.log(
    `~${Math.round(total / run.decisions)} bytes allocated per decision (${HELD * 8}+ of them the callers' own)`,
  );
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`${String(Math.round(bytes / run.decisions)).padStart(6)} B  ${site}`);
}

interface ProfileNode {
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main(): Promise<void> {
  const server = await startRedis(hasTaskset() ? { cpu: 1 } : {});
  const client = new Redis({ port: server.port });
  try {
    const builds = (process.env.RP_BUILDS ?? `current=${require.resolve('@sluice/core')}`)
      .split(';')
      .map((text) => text.split(/=(.*)/s) as [string, string]);
    const cases: Array<[string, () => Promise<unknown>]> = builds.map(([name, path]) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const core = require(resolve(path)) as typeof Core;
      const limiter = core.createLimiter({
        rate: { limit: 100_000_000, window: 60_000 },
        prefix: `redis-path-${name}`,
        store: new core.RedisStore({ client }),
        // As in the HTTP section (see sluice-limiter.ts).
        blockCache: true,
        timeoutMs: 1000,
      });
      let fallbacks = 0;
      limiter.on('fallback', () => fallbacks++);
      return [
        name,
        async () => {
          await limiter.consume('127.0.0.1');
          if (fallbacks > 0) throw new Error(`${name}: a decision without the store (timeout)`);
        },
      ];
    });
    if (process.env.RP_HEAP) return await allocations((cases.at(-1) as [string, () => Promise<unknown>])[1]);
    for (const [, one] of cases) await closedLoop(one);
    const runs = new Map<string, Run[]>(cases.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const [name, one] of cases) runs.get(name)?.push(await closedLoop(one));
    for (const [name, rows] of runs) {
      console.log(
        `${name.padEnd(12)} decisions/s ${Math.round(median(rows.map((r) => r.rate)))}` +
          `  CPU µs/decision ${median(rows.map((r) => r.cpuUs)).toFixed(2)} [${rows.map((r) => r.cpuUs.toFixed(1)).join(' ')}]` +
          `  GC µs/decision ${median(rows.map((r) => r.gcUs)).toFixed(2)}`,
      );
    }
  } finally {
    client.disconnect();
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
