import { createAdaptiveLimiter, createConcurrencyLimiter, createLimiter } from '@sluice/core';
import { dashboard, openTelemetry } from '@sluice/metrics';
import { MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { errorOf } from '../../core/test/contract/config-error-of';
import { fakeClock } from '../../core/test/contract/fake-clock';
import { FlakyStore } from '../../core/test/resilience/flaky-store';

/** A reader the test collects from by hand. */
class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function collected(reader: TestReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect();
  return new Map(
    resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((m) => [m.descriptor.name, m]),
  );
}

const points = (metric: MetricData | undefined) =>
  (metric?.dataPoints ?? []).map((p) => [p.attributes, p.value] as const);

describe('openTelemetry({ meter })', () => {
  test('the same counts through OpenTelemetry instruments', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const clock = fakeClock();
    const metrics = openTelemetry({ meter: provider.getMeter('sluice'), clock });
    const limiter = createLimiter({ name: 'per-user', rate: '2/1m', metrics, clock });
    for (let i = 0; i < 3; i++) await limiter.consume('ann');
    const store = new FlakyStore();
    const remote = createLimiter({ name: 'remote', rate: '10r/s', store, metrics, clock, timeoutMs: 20 });
    await remote.consume('k');
    store.mode = 'throw';
    await remote.consume('k2');

    const all = await collected(reader);
    expect(points(all.get('sluice.decisions'))).toEqual([
      [{ limiter: 'per-user', outcome: 'admitted' }, 2],
      [{ limiter: 'per-user', outcome: 'delayed' }, 0],
      [{ limiter: 'per-user', outcome: 'limited' }, 1],
      [{ limiter: 'remote', outcome: 'admitted' }, 2],
      [{ limiter: 'remote', outcome: 'delayed' }, 0],
      [{ limiter: 'remote', outcome: 'limited' }, 0],
    ]);
    expect(points(all.get('sluice.store.errors'))).toEqual([
      [{ limiter: 'remote', kind: 'timeout' }, 0],
      [{ limiter: 'remote', kind: 'error' }, 1],
    ]);
    expect(points(all.get('sluice.degraded_decisions'))).toContainEqual([
      { limiter: 'remote', mode: 'insurance' },
      1,
    ]);
    expect(points(all.get('sluice.store.up'))).toEqual([[{ limiter: 'remote' }, 1]]);
    const [histogram] = all.get('sluice.store.duration')?.dataPoints ?? [];
    expect(histogram?.attributes).toEqual({ limiter: 'remote', store: 'custom' });
    expect((histogram?.value as { count: number }).count).toBe(2);
    expect(all.get('sluice.store.duration')?.descriptor.unit).toBe('s');
    // Hot keys and the dashboard read the same counts.
    expect(metrics.hotKeys('per-user')[0]).toMatchObject({ key: 'ann', requests: 3, limited: 1 });
    dashboard({ metrics, authorize: 'loopback' }).close();
    await provider.shutdown();
  });

  test('concurrency limiters: in flight and queued gauges', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const metrics = openTelemetry({ meter: provider.getMeter('sluice') });
    const limiter = createConcurrencyLimiter({ name: 'conc', max: 1, queue: { maxWaitMs: 60_000 }, metrics });
    const held = await limiter.acquire('k');
    const waiting = limiter.acquire('k');
    let all = await collected(reader);
    expect(points(all.get('sluice.in_flight'))).toEqual([[{ limiter: 'conc' }, 1]]);
    expect(points(all.get('sluice.queued'))).toEqual([[{ limiter: 'conc' }, 1]]);
    await held.permit?.release();
    await (await waiting).permit?.release();
    all = await collected(reader);
    expect(points(all.get('sluice.in_flight'))).toEqual([[{ limiter: 'conc' }, 0]]);
    expect(points(all.get('sluice.queued'))).toEqual([[{ limiter: 'conc' }, 0]]);
  });

  test('adaptive limiters: limit, in flight, queued and shed by partition', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const metrics = openTelemetry({ meter: provider.getMeter('sluice') });
    const limiter = createAdaptiveLimiter({
      name: 'shop',
      initial: 2,
      min: 2,
      max: 2,
      queue: false,
      eventLoop: false,
      metrics,
    });
    limiter.acquire();
    limiter.acquire();
    limiter.acquire(); // shed
    const all = await collected(reader);
    expect(points(all.get('sluice.adaptive.limit'))).toEqual([[{ limiter: 'shop', partition: '*' }, 2]]);
    expect(points(all.get('sluice.in_flight'))).toEqual([[{ limiter: 'shop', partition: '*' }, 2]]);
    expect(points(all.get('sluice.queued'))).toEqual([[{ limiter: 'shop', partition: '*' }, 0]]);
    expect(points(all.get('sluice.shed'))).toEqual([[{ limiter: 'shop', partition: '*' }, 1]]);
    await provider.shutdown();
  });

  test('bad options fail at construction, naming the option', () => {
    expect(errorOf(() => openTelemetry({} as never)).option).toBe('meter');
    expect(errorOf(() => openTelemetry({ meter: { createHistogram() {} } } as never)).option).toBe('meter');
    const meter = new MeterProvider().getMeter('x');
    expect(errorOf(() => openTelemetry({ meter, registry: 1 } as never)).option).toBe('registry');
  });
});
