// A focused HTTP run for work on the adapters: only the memory-store variants (sluice and the
// usual limiter, admitted and 429 paths), no Redis, nothing written to bench/results.
//   cd bench && npx tsx src/http/focus.ts            (BENCH_FRAMEWORKS=koa,fastify to narrow)
// Ratios of one run compare with each other only: the machine is shared and noisy.
import { spawnTsChild } from '../child';
import { hasTaskset } from '../machine';
import { availableParallelism } from 'node:os';
import { settingsFromEnv } from '../settings';
import { FRAMEWORKS, VARIANTS, type Framework } from './apps';
import { runFramework } from './http';

async function main(): Promise<void> {
  const settings = settingsFromEnv({ BENCH_QUICK: '1', BENCH_HTTP_ROUNDS: '3', ...process.env });
  const only = process.env.BENCH_FRAMEWORKS?.split(',');
  const frameworks = FRAMEWORKS.filter((name: Framework) => only === undefined || only.includes(name));
  // BENCH_LIMITERS=concurrency: only those limiters' variants (sluice, usual, concurrency).
  const limiters = process.env.BENCH_LIMITERS?.split(',');
  const variants = VARIANTS.filter(
    (variant) => variant.store === 'memory' && (limiters === undefined || limiters.includes(variant.limiter)),
  );
  const pinned = availableParallelism() >= 2 && hasTaskset();
  const loadgen = spawnTsChild('http/loadgen-child.ts', pinned ? { cpu: 1 } : {});
  const lines = [
    '| framework | limiter | path | × bare | rounds | CPU/request × bare | req/s | bare req/s |',
    '| --- | --- | --- | ---: | --- | ---: | ---: | ---: |',
  ];
  try {
    await loadgen.first('ready');
    for (const framework of frameworks) {
      const { rows } = await runFramework(
        framework,
        loadgen,
        undefined,
        settings,
        pinned ? 0 : undefined,
        variants,
      );
      for (const row of rows) {
        lines.push(
          `| ${framework} | ${row.name} | ${row.path} | ${row.ratio.toFixed(3)} | ${row.ratios.join(' ')} | ${row.cpuRatio.toFixed(3)} | ${row.rps} | ${row.bareRps} |`,
        );
      }
    }
  } finally {
    await loadgen.stop();
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
