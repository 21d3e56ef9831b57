// The in-process parts of the metrics section, alone in a process run with --expose-gc:
// the time of one Prometheus scrape with 50 limiters, and the heap the hot keys hold.
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { createLimiter, type Decision, type LimiterMetrics, type Policy } from '@sluice/core';
import { createHttpLimiter } from '@sluice/core/adapter';
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

/**
 * ns per request the HTTP layer takes to admit (`decideSync`, in-memory, as every adapter calls
 * it), without and with `metrics`, one key or 10 000 rotating ones (each new to the hot-key
 * summary: its worst case), rounds interleaved; medians.
 */
function decideNs(rounds: number, ms: number): Record<string, number> {
  const make = (withMetrics: boolean) =>
    createHttpLimiter({
      limiter: createLimiter({
        rate: { limit: 100_000_000, window: 60_000 },
        ...(withMetrics ? { name: 'bench', metrics: prometheus({ registry: new Registry() }) } : {}),
      }),
    });
  const req = new IncomingMessage(new Socket());
  const addresses = Array.from({ length: 10_000 }, (_, i) => `198.51.${i >> 8}.${i & 255}`);
  const cases: Record<string, () => void> = {};
  for (const withMetrics of [false, true]) {
    const http = make(withMetrics);
    const one = { remoteAddress: '127.0.0.1', url: '/', headers: {} };
    const many = { remoteAddress: '', url: '/', headers: {} };
    let i = 0;
    cases[`one key${withMetrics ? ', metrics' : ''}`] = () => void http.decideSync(req, one);
    cases[`10 000 keys${withMetrics ? ', metrics' : ''}`] = () => {
      many.remoteAddress = addresses[i++ % addresses.length] as string;
      void http.decideSync(req, many);
    };
  }
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round <= rounds; round++) {
    for (const [name, fn] of Object.entries(cases)) {
      let calls = 0;
      const started = performance.now();
      while (performance.now() - started < ms) {
        for (let k = 0; k < 1000; k++) fn();
        calls += 1000;
      }
      if (round > 0) samples[name]?.push(((performance.now() - started) * 1e6) / calls);
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([name, values]) => {
      values.sort((a, b) => a - b);
      return [name, Math.round(values[Math.floor(values.length / 2)] as number)];
    }),
  );
}

async function main(): Promise<void> {
  const limiters = Number(process.env.BENCH_SCRAPE_LIMITERS ?? 50);
  const scrapes = Number(process.env.BENCH_SCRAPES ?? 200);
  const manyKeys = Number(process.env.BENCH_HOT_KEYS ?? 1_000_000);
  const result = {
    decideNs: decideNs(
      Number(process.env.BENCH_DECIDE_ROUNDS ?? 7),
      Number(process.env.BENCH_DECIDE_MS ?? 200),
    ),
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
