// The in-process parts of the metrics section, alone in a process run with --expose-gc:
// the time of one Prometheus scrape with 50 limiters, and the heap the hot keys hold.
import type { Decision, LimiterMetrics, Policy } from '@sluice/core';
import { prometheus } from '@sluice/metrics';
import { Registry } from 'prom-client';

const gc = (globalThis as { gc?: () => void }).gc;

function settledHeap(): number {
  if (gc === undefined) throw new Error('metrics-child needs node --expose-gc');
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

const POLICY = { algorithm: 'gcra', limit: 1, windowMs: 1000, burst: 0 } as unknown as Policy;

/** A decision as a limiter reports it, for `key`. */
function decision(key: string, allowed: boolean): Decision {
  return { allowed, limit: 1, remaining: 0, resetMs: 0, retryAfterMs: 0, delayMs: 0, key, policy: POLICY };
}

/** `registry.metrics()` with `limiters` names, half on a remote store (all series), each with counts: ms per scrape. */
async function scrape(
  limiters: number,
  scrapes: number,
): Promise<{ medianMs: number; p99Ms: number; bytes: number }> {
  const registry = new Registry();
  const metrics = prometheus({ registry });
  for (let i = 0; i < limiters; i++) {
    const remote = i % 2 === 0;
    const recorder = metrics.limiter({
      name: `limiter-${i}`,
      store: remote ? 'redis' : 'memory',
      remote,
      dryRun: false,
    });
    for (let d = 0; d < 100; d++) recorder.decided(decision(`k${d}`, d % 3 !== 0));
    if (remote) for (let c = 0; c < 100; c++) recorder.storeCall(0.0001 * c);
  }
  for (let i = 0; i < 20; i++) await registry.metrics(); // warm-up
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < scrapes; i++) {
    const started = performance.now();
    bytes = (await registry.metrics()).length;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return {
    medianMs: times[Math.floor(times.length / 2)] as number,
    p99Ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] as number,
    bytes,
  };
}

/**
 * Heap held by one limiter's metrics after `keys` distinct keys (default hot keys: 128 counters),
 * each key made by `keyOf`. The key texts are garbage once counted, as a request's are.
 */
function hotKeyHeap(keys: number, keyOf: (i: number) => string): number {
  const metrics = prometheus({ registry: new Registry() });
  const before = settledHeap();
  const recorder: LimiterMetrics = metrics.limiter({
    name: 'flood',
    store: 'memory',
    remote: false,
    dryRun: false,
  });
  for (let i = 0; i < keys; i++) recorder.decided(decision(keyOf(i), i % 2 === 0));
  const after = settledHeap();
  if (metrics.hotKeys('flood', 1).length !== 1) throw new Error('no hot key kept');
  return after - before;
}

async function main(): Promise<void> {
  const limiters = Number(process.env.BENCH_SCRAPE_LIMITERS ?? 50);
  const scrapes = Number(process.env.BENCH_SCRAPES ?? 200);
  const manyKeys = Number(process.env.BENCH_HOT_KEYS ?? 1_000_000);
  const result = {
    scrape: { limiters, ...(await scrape(limiters, scrapes)) },
    hotKeys: {
      fewKeys: 10_000,
      manyKeys,
      fewBytes: hotKeyHeap(10_000, (i) => `198.51.${i >> 8}.${i & 255}`),
      manyBytes: hotKeyHeap(
        manyKeys,
        (i) => `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`,
      ),
      // Each key a slice of a 4 kB request line of its own: a counter must not keep its line alive.
      slicedBytes: hotKeyHeap(10_000, (i) => `${'GET /seckill/'.padEnd(4096, 'x')}${i}`.slice(4090)),
    },
  };
  await new Promise<void>((resolve) =>
    process.send?.({ type: 'result', ...result }, undefined, {}, () => resolve()),
  );
}

main().catch((error: unknown) => {
  process.send?.({ type: 'error', message: error instanceof Error ? error.stack : String(error) });
  process.exitCode = 1;
});
