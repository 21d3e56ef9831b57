// A focused HTTP run for work on the adapters: by default only the memory-store variants (sluice
// and the usual limiter, admitted and 429 paths), no Redis, nothing written to bench/results.
//   cd bench && npx tsx src/http/focus.ts            (BENCH_FRAMEWORKS=koa,fastify to narrow)
//   BENCH_STORES=redis: the Redis variants instead (memory,redis: both), on a redis-server of its
//   own pinned beside the load generator (cpu 1), as in the full run
//   BENCH_PATHS=admitted: only that path (admitted, 429)
//   BENCH_FLOOR=1: also the floor of one Redis round trip per request, without a limiter
//   (floor-get: an ioredis GET each; floor-batch: a batched EVAL, as sluice's store batches)
// Ratios of one run compare with each other only: the machine is shared and noisy.
import { spawnTsChild } from '../child';
import { hasTaskset } from '../machine';
import { availableParallelism } from 'node:os';
import { settingsFromEnv } from '../settings';
import { FLOOR_VARIANTS, FRAMEWORKS, VARIANTS, type Framework } from './apps';
import { runFramework } from './http';
import { startRedis, type BenchRedis } from '../redis/redis-server';

async function main(): Promise<void> {
  const settings = settingsFromEnv({ BENCH_QUICK: '1', BENCH_HTTP_ROUNDS: '3', ...process.env });
  const only = process.env.BENCH_FRAMEWORKS?.split(',');
  const frameworks = FRAMEWORKS.filter((name: Framework) => only === undefined || only.includes(name));
  // BENCH_LIMITERS=concurrency: only those limiters' variants (sluice, usual, concurrency).
  const limiters = process.env.BENCH_LIMITERS?.split(',');
  const stores = (process.env.BENCH_STORES ?? 'memory').split(',');
  const paths = process.env.BENCH_PATHS?.split(',');
  // BENCH_FLOOR=1: beside them, the floor of a Redis round trip per request (FLOOR_VARIANTS).
  const variants = [...VARIANTS, ...(process.env.BENCH_FLOOR ? FLOOR_VARIANTS : [])].filter(
    (variant) =>
      stores.includes(variant.store) &&
      (paths === undefined || paths.includes(variant.path)) &&
      (limiters === undefined || limiters.includes(variant.limiter)),
  );
  if (variants.length === 0) throw new Error('BENCH_STORES, BENCH_PATHS, BENCH_LIMITERS: no variant left');
  const pinned = availableParallelism() >= 2 && hasTaskset();
  let redis: BenchRedis | undefined;
  if (variants.some((variant) => variant.store === 'redis'))
    redis = await startRedis(pinned ? { cpu: 1 } : {});
  const loadgen = spawnTsChild('http/loadgen-child.ts', pinned ? { cpu: 1 } : {});
  const lines = [
    '| framework | limiter | path | × bare | rounds | CPU/request × bare | µs/request (bare) | req/s | bare req/s | without store | errors |',
    '| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  try {
    await loadgen.first('ready');
    for (const framework of frameworks) {
      const { rows } = await runFramework(
        framework,
        loadgen,
        redis?.port,
        settings,
        pinned ? 0 : undefined,
        variants,
      );
      for (const row of rows) {
        lines.push(
          `| ${framework} | ${row.name} | ${row.path} | ${row.ratio.toFixed(3)} | ${row.ratios.join(' ')} | ${row.cpuRatio.toFixed(3)} | ${row.cpuUs} (${row.bareCpuUs}) | ${row.rps} | ${row.bareRps} | ${row.withoutStore} | ${row.errors} |`,
        );
      }
    }
  } finally {
    await loadgen.stop();
    await redis?.stop();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
