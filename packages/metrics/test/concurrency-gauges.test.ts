import {
  createConcurrencyLimiter,
  createLimiter,
  RedisStore,
  SluiceConfigError,
  type ConcurrencyDecision,
  type PermitStore,
  type Store,
} from '@sluice/core';
import { concurrencyLimit } from '@sluice/express';
import express from 'express';
import { Registry } from 'prom-client';
import request from 'supertest';
import { prometheus } from '@sluice/metrics';
import { errorOf } from '../../core/test/contract/config-error-of';
import { useRedisServer } from '../../core/test/harness/redis-fixtures';

/** The sample lines of one metric family in an exposition, without HELP and TYPE. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const text = await registry.metrics();
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('concurrency limiters in prometheus()', () => {
  test('in-flight and queued gauges read at scrape time; decisions by outcome', async () => {
    const registry = new Registry();
    const metrics = prometheus({ registry });
    const limiter = createConcurrencyLimiter({
      name: 'checkout',
      max: 2,
      queue: { maxWaitMs: 60_000 },
      metrics,
    });
    const first = await limiter.acquire('user:42');
    const second = await limiter.acquire('user:42');
    const third = limiter.acquire('user:42'); // waits in the queue
    expect(await samples(registry, 'sluice_in_flight')).toEqual(['sluice_in_flight{limiter="checkout"} 2']);
    expect(await samples(registry, 'sluice_queued')).toEqual(['sluice_queued{limiter="checkout"} 1']);

    await first.permit?.release(); // handed to the waiter
    const waited = await third;
    expect(waited.allowed).toBe(true);
    expect(await samples(registry, 'sluice_in_flight')).toEqual(['sluice_in_flight{limiter="checkout"} 2']);
    expect(await samples(registry, 'sluice_queued')).toEqual(['sluice_queued{limiter="checkout"} 0']);

    await second.permit?.release();
    await waited.permit?.release();
    expect(await samples(registry, 'sluice_in_flight')).toEqual(['sluice_in_flight{limiter="checkout"} 0']);
    expect(await samples(registry, 'sluice_queued')).toEqual(['sluice_queued{limiter="checkout"} 0']);
    // The one that waited for its permit counts as delayed, as a held rate-limited request does.
    expect(await samples(registry, 'sluice_decisions_total')).toEqual([
      'sluice_decisions_total{limiter="checkout",outcome="admitted"} 2',
      'sluice_decisions_total{limiter="checkout",outcome="delayed"} 1',
      'sluice_decisions_total{limiter="checkout",outcome="limited"} 0',
    ]);
    expect((await registry.metrics()).includes('user:42')).toBe(false); // no key text
    expect(metrics.hotKeys('checkout', 1)).toEqual([expect.objectContaining({ key: 'user:42' })]);
  });

  test('refusals count as limited; a rate limiter alone has no concurrency series', async () => {
    const registry = new Registry();
    const metrics = prometheus({ registry });
    const limiter = createConcurrencyLimiter({ max: 1, metrics }); // named after its prefix
    const held = await limiter.acquire('k');
    expect((await limiter.acquire('k')).allowed).toBe(false);
    expect(limiter.acquireSync('k')?.allowed).toBe(false);
    expect(await samples(registry, 'sluice_decisions_total')).toContain(
      'sluice_decisions_total{limiter="sluice",outcome="limited"} 2',
    );
    expect(await samples(registry, 'sluice_in_flight')).toEqual(['sluice_in_flight{limiter="sluice"} 1']);
    await held.permit?.release();
    expect(await samples(registry, 'sluice_store_up')).toEqual([]); // in process: no store series

    const alone = new Registry();
    prometheus({ registry: alone });
    expect(await samples(alone, 'sluice_in_flight')).toEqual([]);
  });

  describe('on a shared store', () => {
    const redis = useRedisServer();

    test('permit calls are store calls: duration by store, health up', async () => {
      const registry = new Registry();
      const metrics = prometheus({ registry });
      const store = new RedisStore({ client: redis.client() });
      const limiter = createConcurrencyLimiter({ name: 'pay', max: 1, store, metrics, timeoutMs: 5000 });
      const held = await limiter.acquire('user:42');
      expect((await limiter.acquire('user:42')).allowed).toBe(false);
      await held.permit?.release();
      // Two acquires and one release went to Redis.
      expect(await samples(registry, 'sluice_store_duration_seconds_count')).toEqual([
        'sluice_store_duration_seconds_count{limiter="pay",store="redis"} 3',
      ]);
      expect(await samples(registry, 'sluice_store_up')).toEqual(['sluice_store_up{limiter="pay"} 1']);
      expect(await samples(registry, 'sluice_store_errors_total')).toEqual([
        'sluice_store_errors_total{limiter="pay",kind="timeout"} 0',
        'sluice_store_errors_total{limiter="pay",kind="error"} 0',
      ]);
    });

    test('failed permit calls count as store errors; the open circuit reads as down, recovery as up', async () => {
      const registry = new Registry();
      const metrics = prometheus({ registry });
      let down = true;
      const permits: PermitStore = {
        acquire: async () => {
          if (down) throw new Error('connection refused');
          return { acquired: true, held: 1 };
        },
        release: async () => undefined,
        renew: async () => ({ held: 0, lost: [] }),
      };
      let now = 1_000_000;
      const store = { permits: () => permits } as unknown as Store;
      const limiter = createConcurrencyLimiter({
        name: 'flaky',
        max: 5,
        store,
        metrics,
        onStoreError: 'fail-open',
        clock: () => now,
      });
      for (let i = 0; i < 3; i++) expect((await limiter.acquire('k')).degraded).toBe('fail-open');
      expect(await samples(registry, 'sluice_store_errors_total')).toContain(
        'sluice_store_errors_total{limiter="flaky",kind="error"} 3',
      );
      expect(await samples(registry, 'sluice_store_up')).toEqual(['sluice_store_up{limiter="flaky"} 0']);
      down = false;
      now += 60_000; // past the circuit's cool-down: the next call tries the store
      const decision = await limiter.acquire('k');
      expect(decision.degraded).toBeUndefined();
      await decision.permit?.release();
      expect(await samples(registry, 'sluice_store_up')).toEqual(['sluice_store_up{limiter="flaky"} 1']);
      expect(await samples(registry, 'sluice_store_duration_seconds_count')).toEqual([
        'sluice_store_duration_seconds_count{limiter="flaky",store="custom"} 5',
      ]);
    });
  });

  test('Express concurrencyLimit: name and metrics; dryRun labels what it let through', async () => {
    const registry = new Registry();
    const metrics = prometheus({ registry });
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const app = express();
    app.use(concurrencyLimit({ name: 'trial', key: 'all', max: 1, dryRun: true, metrics }));
    app.get('/slow', async (_req, res) => {
      entered();
      await gate;
      res.send('ok');
    });
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    const slow = request(app)
      .get('/slow')
      .then((response) => response.status);
    await inHandler;
    expect(await samples(registry, 'sluice_in_flight')).toEqual(['sluice_in_flight{limiter="trial"} 1']);
    expect((await request(app).get('/')).status).toBe(200); // over the limit, let through by dryRun
    open();
    expect(await slow).toBe(200);
    expect(await samples(registry, 'sluice_in_flight')).toEqual(['sluice_in_flight{limiter="trial"} 0']);
    expect(await samples(registry, 'sluice_decisions_total')).toEqual([
      'sluice_decisions_total{limiter="trial",outcome="admitted"} 1',
      'sluice_decisions_total{limiter="trial",outcome="delayed"} 0',
      'sluice_decisions_total{limiter="trial",outcome="limited"} 0',
      'sluice_decisions_total{limiter="trial",outcome="delayed",dry_run="true"} 0',
      'sluice_decisions_total{limiter="trial",outcome="limited",dry_run="true"} 1',
    ]);
  });

  test('the dashboard frames carry in flight and queued for concurrency limiters only', async () => {
    const { History } = await import('../src/dashboard/history');
    const { countsOf } = await import('../src/counting/sluice-metrics');
    const metrics = prometheus({ registry: new Registry() });
    createLimiter({ name: 'rate', rate: '1r/s', metrics });
    const limiter = createConcurrencyLimiter({ name: 'conc', max: 1, queue: { maxWaitMs: 60_000 }, metrics });
    const held = await limiter.acquire('k');
    const waiting = limiter.acquire('k');
    const history = new History(
      countsOf(metrics) as NonNullable<ReturnType<typeof countsOf>>,
      1000,
      () => [],
    );
    history.sample();
    const frames = Object.fromEntries(history.frames().map((f) => [f.name, f.concurrency]));
    expect(frames).toEqual({ rate: null, conc: { inFlight: 1, queued: 1 } });
    await held.permit?.release();
    await (await waiting).permit?.release();
    history.sample();
    expect(history.frames().find((f) => f.name === 'conc')?.concurrency).toEqual({ inFlight: 0, queued: 0 });
  });

  test('a sink without the concurrency methods still works', async () => {
    const decided: unknown[] = [];
    const sink = {
      limiter: () => ({
        decided: (d: unknown) => decided.push(d),
        storeCall: () => undefined,
        storeError: () => undefined,
        storeUp: () => undefined,
        blockCacheHit: () => undefined,
        leaseCall: () => undefined,
      }),
    };
    const limiter = createConcurrencyLimiter({ max: 1, metrics: sink });
    const d: ConcurrencyDecision = await limiter.acquire('k');
    expect(d.allowed).toBe(true);
    expect(decided).toEqual([]); // decided() is for rate decisions only
  });

  test('invalid name or metrics: SluiceConfigError naming the option, as a rate limiter’s', () => {
    for (const name of ['naïve', '', 'x'.repeat(129), 42]) {
      const error = errorOf(() => createConcurrencyLimiter({ max: 1, name: name as string }));
      expect([error.option, error.message]).toEqual(['name', expect.stringContaining('printable ASCII')]);
      expect(errorOf(() => concurrencyLimit({ max: 1, name: name as string })).option).toBe('name');
    }
    for (const metrics of [{}, 'prometheus', { limiter: 1 }]) {
      const error = errorOf(() => createConcurrencyLimiter({ max: 1, metrics: metrics as never }));
      expect(error).toBeInstanceOf(SluiceConfigError);
      expect(error.option).toBe('metrics');
    }
  });
});
