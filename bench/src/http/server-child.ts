// The HTTP servers of one framework, alone on their core: the bare app and every limited variant,
// each on its own loopback port. Only one is under load at a time.
import Redis from 'ioredis';
import { serveRequests } from '../child';
import {
  FRAMEWORKS,
  FLOOR_VARIANTS,
  METRICS_VARIANTS,
  VARIANTS,
  startApp,
  variantId,
  type AppContext,
  type Framework,
  type VariantId,
} from './apps';

async function main(): Promise<void> {
  const framework = process.env.BENCH_FRAMEWORK as Framework;
  if (!FRAMEWORKS.includes(framework)) throw new Error(`BENCH_FRAMEWORK: unknown framework ${framework}`);
  // BENCH_HTTP_VARIANTS: the variant ids to start (all by default); memory ones need no Redis.
  const only = process.env.BENCH_HTTP_VARIANTS?.split(',');
  const variants = [...VARIANTS, ...METRICS_VARIANTS.slice(1), ...FLOOR_VARIANTS].filter(
    (variant) => only === undefined || only.includes(variantId(variant)),
  );
  const redis = new Redis({
    host: '127.0.0.1',
    port: Number(process.env.BENCH_REDIS_PORT ?? 6379),
    lazyConnect: true,
  });
  if (variants.some((variant) => variant.store === 'redis')) {
    await redis.connect();
  }
  const context: AppContext = { framework, redis, counted: new Map() };
  const ports: Partial<Record<VariantId, number>> = {
    bare: (await startApp(framework, 'bare', context)).port,
  };
  for (const variant of variants)
    ports[variantId(variant)] = (await startApp(framework, variant, context)).port;

  serveRequests(async (message) => {
    if (message.type !== 'stats') throw new Error(`unknown request ${message.type}`);
    const cpu = process.cpuUsage();
    return {
      type: 'stats',
      cpuMicros: cpu.user + cpu.system,
      withoutStore: Object.fromEntries(
        [...context.counted].map(([id, counted]) => [id, counted.withoutStore()]),
      ),
    };
  });
  // Stopped by SIGTERM: exit normally, so that `--cpu-prof` (BENCH_SERVER_NODE_ARGS) writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  process.send?.({ type: 'ready', ports });
}

main().catch((error: unknown) => {
  process.send?.({ type: 'error', message: error instanceof Error ? error.stack : String(error) });
  process.exitCode = 1;
});
