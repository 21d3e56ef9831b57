import Redis from 'ioredis';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createLimiter, MemoryStore, RedisStore, type Decision, type Limiter } from '../../src';
import { startRedisServer, type RedisProcess } from '../harness/redis-server';
import { startTcpProxy, type TcpProxy } from '../harness/tcp-proxy';

/**
 * Real faults under real load: redis-server SIGKILLed and restarted on its port, and a TCP proxy
 * adding latency and then dropping every packet. Bounded: a few seconds, ten concurrent loops.
 */
const TIMEOUT_MS = 50;
const SLACK_MS = 20;

interface Sample {
  readonly limiter: string;
  readonly at: number;
  readonly latencyMs: number;
  readonly decision?: Decision;
  readonly error?: unknown;
}

/** Runs `workers` loops of consumes across the limiters until `stop()` is called. */
function load(limiters: Record<string, Limiter>, workers: number, key: (name: string) => string) {
  const samples: Sample[] = [];
  let running = true;
  // A machine that stalls this process (2 shared cores, other test files) delays every timer:
  // that stall is measured and allowed for, nothing else.
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  const names = Object.keys(limiters);
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let i = w; running; i++) {
      const name = names[i % names.length] as string;
      const started = performance.now();
      try {
        const decision = await (limiters[name] as Limiter).consume(key(name));
        samples.push({ limiter: name, at: started, latencyMs: performance.now() - started, decision });
      } catch (error) {
        samples.push({ limiter: name, at: started, latencyMs: performance.now() - started, error });
      }
      // a request every few ms per worker: load, not a busy loop that starves the timers
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  });
  return {
    samples,
    /** The latency every request must stay under: timeoutMs + 20 ms, plus any stall of the process itself. */
    boundMs: () => TIMEOUT_MS + SLACK_MS + Math.max(0, lag.max / 1e6 - 10),
    async stop(): Promise<Sample[]> {
      running = false;
      await Promise.all(loops);
      lag.disable();
      return samples;
    },
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls with one limiter until a decision comes from Redis again; resolves the ms it took. */
async function msUntilRedisDecides(limiter: Limiter, key: string, limitMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    const d = await limiter.consume(key);
    if (d.degraded === undefined) return performance.now() - started;
    await pause(10);
  }
  return Infinity;
}

describe('Redis failures under load', () => {
  let server: RedisProcess;
  const servers: RedisProcess[] = [];
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await Promise.all([server, ...servers].map((s) => s?.stop()));
  });

  test('SIGKILL mid-load: every request answers within timeoutMs + 20 ms by its mode; restart: Redis decides again within 1 s', async () => {
    server = await startRedisServer();
    const client = new Redis({ host: '127.0.0.1', port: server.port });
    clients.push(client);
    const store = new RedisStore({ client });
    const limiters = {
      open: createLimiter({ rate: '1000/1s', store, prefix: 'open', onStoreError: 'fail-open' }),
      closed: createLimiter({ rate: '1000/1s', store, prefix: 'closed', onStoreError: 'fail-closed' }),
      insured: createLimiter({
        algorithm: 'fixed-window',
        rate: '5/1m',
        store,
        prefix: 'insured',
        onStoreError: { insurance: new MemoryStore() },
        // The block cache would answer this key's rejections itself, hiding the insurance store.
        blockCache: false,
      }),
    };
    await client.ping();
    expect((await limiters.open.consume('warm-up')).degraded).toBeUndefined(); // scripts loaded
    const run = load(limiters, 10, (name) => (name === 'insured' ? 'one-key' : 'many'));
    let crashedAt = Infinity;
    try {
      await pause(300);
      crashedAt = performance.now();
      await server.crash();
      await pause(700);
    } finally {
      await run.stop();
    }
    const { samples } = run;

    expect(samples.filter((s) => s.error !== undefined)).toEqual([]);
    const slow = samples.filter((s) => s.latencyMs > run.boundMs());
    expect(slow.map((s) => Math.round(s.latencyMs))).toEqual([]);
    // Every decision made once the crash had surely been seen is a fallback, by its mode.
    const after = samples.filter((s) => s.at > crashedAt + TIMEOUT_MS + SLACK_MS);
    const byMode = (name: string) =>
      after.filter((s) => s.limiter === name).map((s) => s.decision as Decision);
    expect(byMode('open').length).toBeGreaterThan(10);
    expect(byMode('open').every((d) => d.allowed && d.degraded === 'fail-open')).toBe(true);
    expect(
      byMode('closed').every(
        (d) => !d.allowed && d.reason === 'store-unavailable' && d.degraded === 'fail-closed',
      ),
    ).toBe(true);
    expect(byMode('insured').every((d) => d.degraded === 'insurance')).toBe(true);
    const insured = samples
      .filter((s) => s.decision?.degraded === 'insurance')
      .map((s) => s.decision as Decision);
    expect(insured.filter((d) => d.allowed).length).toBe(5); // the insurance store's own limit, exactly
    expect(insured.length).toBeGreaterThan(10);
    expect(byMode('closed').length).toBeGreaterThan(10);

    // Restart on the same port: the scripts are gone (NOSCRIPT → reloaded), and nothing fails.
    server = await startRedisServer({ port: server.port });
    const restartedAt = performance.now();
    for (const limiter of Object.values(limiters)) {
      await msUntilRedisDecides(limiter, 'after-restart', 3000);
      expect(performance.now() - restartedAt).toBeLessThan(1000);
    }
  }, 30_000);

  test('SCRIPT FLUSH and DEBUG RELOAD during load: zero failed requests, every one decided by Redis', async () => {
    const debuggable = await startRedisServer({ args: ['--enable-debug-command', 'yes'] });
    servers.push(debuggable);
    const client = new Redis({ host: '127.0.0.1', port: debuggable.port });
    const admin = new Redis({ host: '127.0.0.1', port: debuggable.port });
    clients.push(client, admin);
    await client.ping();
    const store = new RedisStore({ client });
    const limiters = Object.fromEntries(
      (['gcra', 'sliding-log', 'fixed-window'] as const).map((algorithm) => [
        algorithm,
        createLimiter({
          algorithm,
          rate: '100000/1s',
          store,
          prefix: 'reload',
          onStoreError: 'fail-closed',
          timeoutMs: 1000,
        }),
      ]),
    );
    const run = load(limiters, 10, () => 'k');
    try {
      for (let i = 0; i < 3; i++) {
        await pause(100);
        await admin.script('FLUSH');
      }
      await admin.call('DEBUG', 'RELOAD');
      await pause(100);
    } finally {
      await run.stop();
    }
    const { samples } = run;
    expect(samples.length).toBeGreaterThan(50);
    expect(samples.filter((s) => s.error !== undefined || s.decision?.degraded !== undefined)).toEqual([]);
    expect(samples.every((s) => s.decision?.allowed)).toBe(true);
  }, 30_000);

  describe('through a TCP proxy', () => {
    let proxy: TcpProxy;
    afterAll(async () => {
      await proxy?.close();
    });

    test('200 ms of latency, then every packet dropped: requests still answer within timeoutMs + 20 ms; healed: Redis decides again within 1 s', async () => {
      const target = await startRedisServer();
      servers.push(target);
      proxy = await startTcpProxy(target.port);
      const client = new Redis({ host: '127.0.0.1', port: proxy.port });
      clients.push(client);
      const store = new RedisStore({ client });
      const limiter = createLimiter({ rate: '1000/1s', store, prefix: 'proxied', onStoreError: 'fail-open' });
      await client.ping();
      expect((await limiter.consume('k')).degraded).toBeUndefined();

      for (const fault of ['latency', 'blackhole'] as const) {
        if (fault === 'latency') proxy.setLatency(200);
        else {
          proxy.setLatency(0);
          proxy.setBlackhole(true);
        }
        const run = load({ limiter }, 10, () => 'k');
        await pause(600).finally(() => run.stop());
        const { samples } = run;
        expect(samples.filter((s) => s.error !== undefined)).toEqual([]);
        expect(
          samples.filter((s) => s.latencyMs > run.boundMs()).map((s) => Math.round(s.latencyMs)),
        ).toEqual([]);
        expect(samples.filter((s) => s.decision?.degraded === 'fail-open').length).toBeGreaterThan(10);
      }

      proxy.setBlackhole(false);
      expect(await msUntilRedisDecides(limiter, 'k', 3000)).toBeLessThan(1000);
    }, 30_000);
  });
});
