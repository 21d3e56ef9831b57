// Bytes allocated, CPU and wall time per decision on the Redis path, builds interleaved (A B A B,
// medians of rounds); writes nothing to results/. Bytes come from v8.GCProfiler: what each GC
// freed plus what the heap grew, over a fixed number of decisions, exact to a few bytes.
//   cd bench && npx tsx src/http/alloc-probe.ts
//   PROBE_BUILDS="before=../packages/core/.dist-before/index.cjs;after=../packages/core/dist/index.cjs"
//     (a copy of a build must sit inside the repository to find its dependencies)
//   PROBE_IN_FLIGHT: 1000 (default; one hot key) or 1 (10 000 keys in turn, as the Redis section)
//   PROBE_RLF=1: rate-limiter-flexible's RateLimiterRedis beside them; PROBE_FLOOR=1: the floor,
//   a batched EVAL without a limiter (round-trip.ts); PROBE_HTTP=1: through
//   createHttpLimiter as the adapters call it; PROBE_JOINT=1: consumeAll of two limiters (per
//   address, per SKU) as the flash sale asks; PROBE_CONCURRENCY=1: a concurrency limit's
//   acquire and release (with PROBE_HTTP=1: through createHttpConcurrencyLimiter, released
//   by a stand-in response's close); PROBE_HEAP=<bytes>: bytes by allocation site
//   instead (run with node --no-turbo-inlining --import tsx to see inlined functions apart)
import { GCProfiler } from 'node:v8';
import { dirname, join, resolve } from 'node:path';
import Redis from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import type * as Core from '@sluice/core';
import type * as CoreAdapter from '@sluice/core/adapter';
import { hasTaskset } from '../machine';
import { startRedis } from '../redis/redis-server';
import { redisRoundTrip } from './round-trip';

const IN_FLIGHT = Number(process.env.PROBE_IN_FLIGHT ?? 1000);
const N = Number(process.env.PROBE_N ?? (IN_FLIGHT === 1 ? 5000 : 40000));
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 7);
const KEYS = Array.from({ length: 10_000 }, (_, i) => `user:${i}`);

interface Sample {
  bytes: number;
  cpuUs: number;
  rate: number;
}

async function sample(one: (key: string) => Promise<unknown>): Promise<Sample> {
  let next = 0;
  const profiler = new GCProfiler();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  profiler.start();
  const used0 = process.memoryUsage().heapUsed;
  const worker = async (): Promise<void> => {
    while (next < N) {
      const i = next++;
      await one(IN_FLIGHT === 1 ? (KEYS[i % KEYS.length] as string) : '127.0.0.1');
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const used1 = process.memoryUsage().heapUsed;
  const stats = profiler.stop();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  let freed = 0;
  for (const gc of stats.statistics)
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  return { bytes: (freed + used1 - used0) / N, cpuUs: (cpu.user + cpu.system) / N, rate: N / seconds };
}

interface ProfileNode {
  readonly callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

async function heap(one: (key: string) => Promise<unknown>): Promise<void> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: Number(process.env.PROBE_HEAP),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  await sample(one);
  await sample(one);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: ProfileNode };
  };
  const bySite = new Map<string, number>();
  const walk = (node: ProfileNode, parent: string): void => {
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    const site = `${functionName || '(anonymous)'} ${url.split('/').at(-1) ?? ''}:${lineNumber + 1}:${columnNumber + 1}`;
    const key = process.env.PROBE_PARENT ? `${site} <- ${parent}` : site;
    bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child, site);
  };
  walk(profile.head, '');
  const total = [...bySite.values()].reduce((sum, bytes) => sum + bytes, 0);
  console.log(`~${Math.round(total / (2 * N))} bytes per decision`);
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 45))
    console.log(`${String(Math.round(bytes / (2 * N))).padStart(6)} B  ${site}`);
}

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main(): Promise<void> {
  const server = await startRedis(hasTaskset() ? { cpu: 1 } : {});
  const client = new Redis({ port: server.port });
  try {
    const builds = (process.env.PROBE_BUILDS ?? `current=${require.resolve('@sluice/core')}`)
      .split(';')
      .map((text) => text.split(/=(.*)/s) as [string, string]);
    const cases: Array<[string, (key: string) => Promise<unknown>]> = builds.map(([name, path]) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const core = require(resolve(path)) as typeof Core;
      // The HTTP layer is `@sluice/core/adapter`: adapter.cjs beside index.cjs (older builds had
      // it on the main entry).
      const adapter = (
        'createHttpLimiter' in core
          ? core
          : // eslint-disable-next-line @typescript-eslint/no-require-imports
            require(join(dirname(resolve(path)), 'adapter.cjs'))
      ) as typeof CoreAdapter;
      const store = new core.RedisStore({ client });
      const limiter = core.createLimiter({
        algorithm: (process.env.PROBE_ALGORITHM ?? 'gcra') as Core.AlgorithmName,
        rate: { limit: 100_000_000, window: 60_000 },
        prefix: `probe-${name}`,
        store,
        blockCache: true,
        timeoutMs: 1000,
      });
      let fallbacks = 0;
      limiter.on('fallback', () => fallbacks++);
      if (process.env.PROBE_JOINT) {
        const perSku = core.createLimiter({
          rate: { limit: 100_000_000, window: 60_000 },
          prefix: `probe-${name}-sku`,
          store,
          timeoutMs: 1000,
        });
        perSku.on('fallback', () => fallbacks++);
        return [
          name,
          async (key: string) => {
            await core.consumeAll([
              { limiter, key },
              { limiter: perSku, key: 'sku:1' },
            ]);
            if (fallbacks > 0) throw new Error(`${name}: a decision without the store (timeout)`);
          },
        ];
      }
      if (process.env.PROBE_CONCURRENCY) {
        const limit = core.createConcurrencyLimiter({
          max: 100_000_000,
          prefix: `probe-${name}-conc`,
          store,
          timeoutMs: 1000,
        });
        if (process.env.PROBE_HTTP) {
          // The HTTP layer's share, as the adapters call it, on a stand-in response whose
          // `close` (the end of the request) gives the permit back.
          const http = adapter.createHttpConcurrencyLimiter({ limiter: limit } as never) as unknown as {
            decide(r: unknown, h: unknown, response: unknown): Promise<{ kind: string }>;
          };
          return [
            name,
            async (key: string) => {
              const request = { remoteAddress: key, url: '/', headers: {} };
              let close: (() => void) | undefined;
              const response = {
                socket: {},
                req: { socket: { destroyed: false } },
                on: (_event: 'close', listener: () => void) => (close = listener),
              };
              const outcome = await http.decide(request, request, response);
              if (outcome.kind !== 'next') throw new Error(`${name}: ${outcome.kind}, not admitted`);
              close?.();
            },
          ];
        }
        return [
          name,
          async (key: string) => {
            const decision = await limit.acquire(key);
            if (decision.degraded !== undefined) throw new Error(`${name}: a decision without the store`);
            await decision.permit?.release();
          },
        ];
      }
      if (process.env.PROBE_HTTP) {
        // The HTTP layer's share, as the adapters call it (decideSync first, then decide).
        const http = adapter.createHttpLimiter({ limiter } as never) as unknown as {
          decideSync(r: unknown, h: unknown): unknown;
          decide(r: unknown, h: unknown): Promise<unknown>;
        };
        return [
          name,
          async (key: string) => {
            const request = {
              remoteAddress: key === '127.0.0.1' ? key : `10.0.${key.length}.1`,
              url: '/',
              headers: {},
            };
            if (http.decideSync(request, request) === undefined) await http.decide(request, request);
            if (fallbacks > 0) throw new Error(`${name}: a decision without the store (timeout)`);
          },
        ];
      }
      return [
        name,
        async (key: string) => {
          await limiter.consume(key);
          if (fallbacks > 0) throw new Error(`${name}: a decision without the store (timeout)`);
        },
      ];
    });
    if (process.env.PROBE_RLF) {
      const rlf = new RateLimiterRedis({
        storeClient: client,
        points: 100_000_000,
        duration: 60,
        keyPrefix: 'probe-rlf',
      });
      cases.push(['rlf', (key) => rlf.consume(key)]);
    }
    if (process.env.PROBE_FLOOR) cases.push(['floor', redisRoundTrip(client, 'probe-floor', 'batch')]);
    for (const [, one] of cases) await sample(one);
    if (process.env.PROBE_HEAP)
      return await heap((cases.at(-1) as [string, (key: string) => Promise<unknown>])[1]);
    const rows = new Map<string, Sample[]>(cases.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (let i = 0; i < cases.length; i++) {
        const [name, one] = cases[(i + round) % cases.length] as [string, (key: string) => Promise<unknown>];
        rows.get(name)?.push(await sample(one));
      }
    const base = rows.get(cases[0]?.[0] ?? '') ?? [];
    for (const [name, samples] of rows) {
      console.log(
        `${name.padEnd(8)} ${IN_FLIGHT} in flight: bytes/decision ${Math.round(median(samples.map((s) => s.bytes)))}` +
          ` [${samples.map((s) => Math.round(s.bytes)).join(' ')}]` +
          `  CPU µs/decision ${median(samples.map((s) => s.cpuUs)).toFixed(2)} [${samples.map((s) => s.cpuUs.toFixed(1)).join(' ')}]` +
          `  decisions/s ${Math.round(median(samples.map((s) => s.rate)))}` +
          `  rate / ${cases[0]?.[0]} ${median(samples.map((s, r) => s.rate / (base[r]?.rate ?? NaN))).toFixed(3)}`,
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
