import { createLimiter, RedisStore, SluiceConfigError } from '@sluice/core';
import { rateLimit } from '@sluice/express';
import express from 'express';
import { Registry } from 'prom-client';
import request from 'supertest';
import { prometheus } from '@sluice/metrics';
import { errorOf } from '../../core/test/contract/config-error-of';
import { fakeClock } from '../../core/test/contract/fake-clock';
import { useRedisServer } from '../../core/test/harness/redis-fixtures';
import { FlakyStore } from '../../core/test/resilience/flaky-store';

/** The sample lines of one metric family in an exposition, without HELP and TYPE. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const text = await registry.metrics();
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('prometheus()', () => {
  test('requests of cost 0 count as any request, in the decisions and the hot keys', async () => {
    const registry = new Registry();
    const clock = fakeClock();
    const metrics = prometheus({ registry, clock });
    const app = express();
    const cost = (req: express.Request) => Number(req.query.items);
    app.use(rateLimit({ name: 'cart', key: '$arg_user', rate: '2/1m', metrics, clock, cost }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    const statuses = [];
    for (const items of [0, 2, 0, 0, 1])
      statuses.push((await request(app).get(`/?user=u&items=${items}`)).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    expect(await samples(registry, 'sluice_decisions_total')).toEqual([
      'sluice_decisions_total{limiter="cart",outcome="admitted"} 2',
      'sluice_decisions_total{limiter="cart",outcome="delayed"} 0',
      'sluice_decisions_total{limiter="cart",outcome="limited"} 3',
    ]);
    expect(metrics.hotKeys('cart')).toEqual([
      { key: 'u', requests: 5, admitted: 2, delayed: 0, limited: 3, error: 0 },
    ]);
  });

  test('countWhen: each admitted request given back is counted in sluice_refunded_total', async () => {
    const registry = new Registry();
    const clock = fakeClock();
    const metrics = prometheus({ registry, clock });
    const app = express();
    app.use(rateLimit({ name: 'login', key: 'all', rate: '5/15m', metrics, clock, countWhen: 'failed' }));
    app.get('/', (req, res) => {
      res.status(req.query.password === 'right' ? 200 : 401).send('');
    });
    expect(await samples(registry, 'sluice_refunded_total')).toEqual([]);
    for (const password of ['right', 'wrong', 'right']) await request(app).get(`/?password=${password}`);
    // The give-back runs when the response closes, right after the client has it.
    for (let i = 0; i < 10; i++) await new Promise((done) => setImmediate(done));
    expect(await samples(registry, 'sluice_refunded_total')).toEqual([
      'sluice_refunded_total{limiter="login"} 2',
    ]);
  });

  test('an Express app: decisions by limiter and outcome, as the scrape reads them', async () => {
    const registry = new Registry();
    const metrics = prometheus({ registry });
    const clock = fakeClock();
    const app = express();
    app.use(rateLimit({ name: 'per-ip', rate: '2/1m', metrics, clock }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    app.get('/metrics', async (_req, res) => {
      res.type(registry.contentType).send(await registry.metrics());
    });
    for (let i = 0; i < 5; i++) await request(app).get('/');
    expect(await samples(registry, 'sluice_decisions_total')).toEqual([
      'sluice_decisions_total{limiter="per-ip",outcome="admitted"} 2',
      'sluice_decisions_total{limiter="per-ip",outcome="delayed"} 0',
      'sluice_decisions_total{limiter="per-ip",outcome="limited"} 3',
    ]);
    // The scrape itself went through the limit: it was the sixth request, and refused.
    const scrape = await request(app).get('/metrics');
    expect(scrape.status).toBe(429);
    expect(await samples(registry, 'sluice_decisions_total')).toContain(
      'sluice_decisions_total{limiter="per-ip",outcome="limited"} 4',
    );
    // A memory store has no store series.
    expect(await samples(registry, 'sluice_store_up')).toEqual([]);
    expect((await registry.metrics()).includes('127.0.0.1')).toBe(false); // no key text
  });

  test('limiters sharing a name share their series; a dry-run limit’s let-through is labelled', async () => {
    const registry = new Registry();
    const metrics = prometheus({ registry });
    const clock = fakeClock();
    const a = createLimiter({ name: 'shared', rate: '1/1m', metrics, clock });
    const b = createLimiter({ name: 'shared', rate: '1/1m', metrics, clock, prefix: 'other' });
    await a.consume('k');
    await b.consume('k');
    await b.consume('k');
    const app = express();
    app.use(rateLimit({ name: 'trial', rate: '1/1m', dryRun: true, metrics, clock, key: 'all' }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    for (let i = 0; i < 3; i++) expect((await request(app).get('/')).status).toBe(200);
    expect(await samples(registry, 'sluice_decisions_total')).toEqual([
      'sluice_decisions_total{limiter="shared",outcome="admitted"} 2',
      'sluice_decisions_total{limiter="shared",outcome="delayed"} 0',
      'sluice_decisions_total{limiter="shared",outcome="limited"} 1',
      'sluice_decisions_total{limiter="trial",outcome="admitted"} 1',
      'sluice_decisions_total{limiter="trial",outcome="delayed"} 0',
      'sluice_decisions_total{limiter="trial",outcome="limited"} 0',
      'sluice_decisions_total{limiter="trial",outcome="delayed",dry_run="true"} 0',
      'sluice_decisions_total{limiter="trial",outcome="limited",dry_run="true"} 2',
    ]);
    expect(metrics.names()).toEqual(['shared', 'trial']);
  });

  test('a failing remote store: errors by kind, degraded decisions by mode, the store down then up', async () => {
    const registry = new Registry();
    const metrics = prometheus({ registry });
    const clock = fakeClock();
    const store = new FlakyStore();
    const limiter = createLimiter({ name: 'flaky', rate: '100r/s', store, metrics, clock, timeoutMs: 10 });
    await limiter.consume('k');
    store.mode = 'throw';
    for (let i = 0; i < 3; i++) await limiter.consume('k');
    store.mode = 'hang';
    clock.advance(1000);
    await limiter.consume('k'); // the probe times out
    expect(await samples(registry, 'sluice_store_errors_total')).toEqual([
      'sluice_store_errors_total{limiter="flaky",kind="timeout"} 1',
      'sluice_store_errors_total{limiter="flaky",kind="error"} 3',
    ]);
    expect(await samples(registry, 'sluice_degraded_decisions_total')).toEqual([
      'sluice_degraded_decisions_total{limiter="flaky",mode="insurance"} 4',
      'sluice_degraded_decisions_total{limiter="flaky",mode="fail-open"} 0',
      'sluice_degraded_decisions_total{limiter="flaky",mode="fail-closed"} 0',
    ]);
    expect(await samples(registry, 'sluice_store_up')).toEqual(['sluice_store_up{limiter="flaky"} 0']);
    store.mode = 'ok';
    clock.advance(1000);
    await limiter.consume('k');
    expect(await samples(registry, 'sluice_store_up')).toEqual(['sluice_store_up{limiter="flaky"} 1']);
    const durations = await samples(registry, 'sluice_store_duration_seconds_count');
    expect(durations).toEqual(['sluice_store_duration_seconds_count{limiter="flaky",store="custom"} 6']);
  });

  describe('on Redis', () => {
    const redis = useRedisServer();

    test('store calls in the histogram, block-cache hits and lease calls counted', async () => {
      const registry = new Registry();
      const metrics = prometheus({ registry });
      const clock = fakeClock();
      const store = new RedisStore({ client: redis.client() });
      const timeoutMs = 5000; // a busy machine must not turn a call into an insurance decision
      const limiter = createLimiter({
        name: 'orders',
        rate: '10/1m',
        store,
        metrics,
        clock,
        prefix: 'p-1',
        timeoutMs,
      });
      for (let i = 0; i < 12; i++) await limiter.consume('sku');
      const leased = createLimiter({
        name: 'leased',
        rate: '100/1m',
        store,
        metrics,
        clock,
        prefix: 'p-2',
        lease: { size: 10 },
        timeoutMs,
      });
      for (let i = 0; i < 25; i++) await leased.consume('sku');
      const text = await registry.metrics();
      expect(text).toContain('sluice_decisions_total{limiter="orders",outcome="admitted"} 10');
      expect(text).toContain('sluice_decisions_total{limiter="orders",outcome="limited"} 2');
      expect(text).toContain('sluice_block_cache_hits_total{limiter="orders"} 1');
      expect(text).toContain('sluice_lease_calls_total{limiter="leased"} 3');
      expect(text).toContain('sluice_store_duration_seconds_count{limiter="orders",store="redis"} 11');
      expect(text).toContain(
        'sluice_store_duration_seconds_bucket{limiter="orders",store="redis",le="+Inf"} 11',
      );
      expect(text).toContain('sluice_store_up{limiter="orders"} 1');
      // Buckets are cumulative and end at the count.
      const buckets = text
        .split('\n')
        .filter(
          (line) => line.startsWith('sluice_store_duration_seconds_bucket') && line.includes('"orders"'),
        )
        .map((line) => Number(line.split(' ').pop()));
      expect(buckets).toEqual([...buckets].sort((x, y) => x - y));
      expect(buckets.at(-1)).toBe(11);
    });
  });

  test('bad options fail at construction, naming the option', () => {
    expect(errorOf(() => prometheus({ registry: new Registry(), registy: 1 } as never)).option).toBe(
      'registy',
    );
    for (const registry of [{}, 'default', 42, { metrics: () => '' }])
      expect(errorOf(() => prometheus({ registry: registry as never })).option).toBe('registry');
    const registry = new Registry();
    prometheus({ registry });
    const twice = errorOf(() => prometheus({ registry }));
    expect([twice.option, twice.message]).toEqual(['registry', expect.stringContaining('already holds')]);
    expect(errorOf(() => prometheus({ registry: new Registry(), hotKeys: { size: 0 } })).option).toBe(
      'hotKeys.size',
    );
    expect(errorOf(() => prometheus({ registry: new Registry(), hotKeys: true as never })).option).toBe(
      'hotKeys',
    );
    expect(errorOf(() => prometheus({ registry: new Registry(), clock: 5 as never })).option).toBe('clock');
    const metrics = prometheus({ registry: new Registry() });
    expect(errorOf(() => metrics.hotKeys('x', 0)).option).toBe('n');
    expect(errorOf(() => metrics.hotKeys(1 as never)).option).toBe('name');
    expect(() => createLimiter({ rate: '1r/s', metrics, name: 'naïve' })).toThrow(SluiceConfigError);
  });

  test('the default registry is prom-client’s own', async () => {
    const { register } = await import('prom-client');
    const metrics = prometheus();
    try {
      await createLimiter({ name: 'global', rate: '1r/s', metrics }).consume('k');
      expect(await register.metrics()).toContain(
        'sluice_decisions_total{limiter="global",outcome="admitted"} 1',
      );
    } finally {
      register.clear();
    }
  });
});

test('sluice_blocked_total counts the refusals of blocked keys, also counted as limited', async () => {
  const registry = new Registry();
  const metrics = prometheus({ registry });
  const clock = fakeClock();
  const logins = createLimiter({ name: 'logins', rate: '1/1h', block: { duration: '15m' }, metrics, clock });
  await logins.consume('ip'); // admitted
  await logins.consume('ip'); // limited: blocked from now
  await logins.consume('ip'); // blocked
  await logins.consume('ip'); // blocked
  const text = await registry.metrics();
  expect(text).toContain('sluice_blocked_total{limiter="logins"} 2');
  expect(text).toContain('sluice_decisions_total{limiter="logins",outcome="limited"} 3');
});
