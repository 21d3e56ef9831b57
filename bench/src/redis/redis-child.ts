// The Redis section's client, in a process of its own: a fresh heap (no garbage of the other
// sections to collect mid-run) on its own core, as redis-benchmark runs apart from the server.
import type { Settings } from '../settings';
import { runRedis } from './redis';

runRedis(
  JSON.parse(String(process.env.BENCH_SETTINGS)) as Settings,
  Number(process.env.BENCH_REDIS_PORT),
).then(
  (result) => process.send?.({ type: 'result', result }, undefined, {}, () => process.exit(0)),
  (error: unknown) =>
    process.send?.(
      { type: 'error', message: error instanceof Error ? error.stack : String(error) },
      undefined,
      {},
      () => process.exit(1),
    ),
);
