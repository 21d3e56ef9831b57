import { SluiceConfigError } from '@sluice/core';
import { checkOptionNames } from '@sluice/core/adapter';
import { DURATION_BUCKETS, type LimiterCounts } from '../counting/limiter-counts';
import { countsOf, SluiceMetrics, type CountingOptions } from '../counting/sluice-metrics';

type Attributes = Record<string, string>;
export type { Attributes as OtelAttributes };

/** The part of an `@opentelemetry/api` `Observable` this package holds (an opaque handle). */
export type OtelObservable = object;

/** The part of an `@opentelemetry/api` `Meter` this package uses (any 1.x meter has it). */
export interface OtelMeter {
  createObservableCounter(name: string, options?: OtelInstrumentOptions): OtelObservable;
  createObservableGauge(name: string, options?: OtelInstrumentOptions): OtelObservable;
  createHistogram(
    name: string,
    options?: OtelInstrumentOptions,
  ): { record(value: number, attributes?: Attributes): void };
  addBatchObservableCallback(
    callback: (result: {
      observe(observable: OtelObservable, value: number, attributes?: Attributes): void;
    }) => void,
    observables: OtelObservable[],
  ): void;
}

/** Instrument options, as `@opentelemetry/api`'s `MetricOptions`. */
export interface OtelInstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

/** Options of {@link openTelemetry}. */
export interface OpenTelemetryOptions extends CountingOptions {
  /** The meter to create the instruments with: `metrics.getMeter('sluice')` of `@opentelemetry/api`. */
  meter: OtelMeter;
}

const OPTION_NAMES: ReadonlySet<string> = new Set(['meter', 'hotKeys', 'clock']);

/**
 * The same counts as {@link prometheus}, through OpenTelemetry metrics: observable counters
 * and a gauge read in one batch callback when the SDK collects, and a histogram of store calls
 * recorded as they end (the API has no observable histogram). Names follow OTel's conventions
 * and become the Prometheus names through OTel's Prometheus exporter: `sluice.decisions`
 * (`sluice_decisions_total`), `sluice.degraded_decisions`, `sluice.store.errors`,
 * `sluice.store.duration` (seconds), `sluice.store.up`, `sluice.block_cache.hits`,
 * `sluice.lease.calls`, for concurrency limiters the gauges `sluice.in_flight` and
 * `sluice.queued`, and for adaptive limiters those two, `sluice.adaptive.limit` and the counter
 * `sluice.shed` by `partition`, with the same attributes (`limiter`, `outcome`, `dry_run`, `mode`,
 * `kind`, `store`, `partition`). `hotKeys` and `dashboard` work with it as with `prometheus()`.
 *
 * @throws `SluiceConfigError` naming an unknown option or a `meter` that is not an OpenTelemetry meter
 * @example
 * ```ts
 * import { metrics as otel } from '@opentelemetry/api';
 * const metrics = openTelemetry({ meter: otel.getMeter('sluice') });
 * app.use(rateLimit({ name: 'per-ip', rate: '10r/s', metrics }));
 * ```
 */
export function openTelemetry(options: OpenTelemetryOptions): SluiceMetrics {
  if (typeof options !== 'object' || options === null)
    throw new SluiceConfigError('options', options, 'expected an object such as { meter }');
  checkOptionNames(options, OPTION_NAMES);
  const { meter } = options;
  const methods = [
    'createObservableCounter',
    'createObservableGauge',
    'createHistogram',
    'addBatchObservableCallback',
  ] as const;
  if (typeof meter !== 'object' || meter === null || methods.some((m) => typeof meter[m] !== 'function'))
    throw new SluiceConfigError(
      'meter',
      meter,
      "expected an OpenTelemetry Meter (metrics.getMeter('sluice'))",
    );

  const duration = meter.createHistogram('sluice.store.duration', {
    description: 'Duration of store calls (remote stores), failures and timeouts included.',
    unit: 's',
    advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
  });
  // Attributes built once per limiter name (again only if its store kind changes).
  const recordDurations = (counts: LimiterCounts): void => {
    let attributes: Attributes = { limiter: counts.name, store: counts.store };
    counts.onStoreCall = (seconds) => {
      if (attributes.store !== counts.store) attributes = { limiter: counts.name, store: counts.store };
      duration.record(seconds, attributes);
    };
  };
  const metrics = new SluiceMetrics(options, recordDurations);
  const limiters = countsOf(metrics) as ReadonlyMap<string, LimiterCounts>;

  const counter = (name: string, description: string, unit: string) =>
    meter.createObservableCounter(name, { description, unit });
  const decisions = counter(
    'sluice.decisions',
    'Decisions of sluice limiters, by outcome; dry_run="true": let through by dryRun.',
    '{decision}',
  );
  const degraded = counter(
    'sluice.degraded_decisions',
    'Decisions made without the store, by onStoreError mode.',
    '{decision}',
  );
  const errors = counter('sluice.store.errors', 'Failed store calls: timeout or error.', '{call}');
  const hits = counter('sluice.block_cache.hits', 'Requests refused by the block cache.', '{request}');
  const leases = counter('sluice.lease.calls', 'Store calls made by lease.', '{call}');
  const up = meter.createObservableGauge('sluice.store.up', {
    description:
      "1 while the limiter's store answers, 0 while its circuit (on Redis Cluster, a master's) is open.",
    unit: '1',
  });

  const gauge = (name: string, description: string) =>
    meter.createObservableGauge(name, { description, unit: '{request}' });
  const inFlight = gauge('sluice.in_flight', 'Permits of concurrency limiters held now in this process.');
  const queued = gauge('sluice.queued', "Requests waiting now in this process's concurrency limiter queues.");
  const adaptiveLimit = gauge(
    'sluice.adaptive.limit',
    "Adaptive limiters' limit of requests in flight now, by partition: its guaranteed part.",
  );
  const shed = counter('sluice.shed', 'Requests adaptive limiters refused, by partition.', '{request}');

  meter.addBatchObservableCallback(
    (result) => {
      for (const c of limiters.values()) {
        const limiter = c.name;
        if (c.concurrency !== undefined) {
          const stats = c.stats();
          result.observe(inFlight, stats.inFlight, { limiter });
          result.observe(queued, stats.queued, { limiter });
        }
        if (c.adaptive !== undefined) {
          for (const [partition, p] of c.adaptiveStats().partitions) {
            result.observe(adaptiveLimit, p.limit, { limiter, partition });
            result.observe(inFlight, p.inFlight, { limiter, partition });
            result.observe(queued, p.queued, { limiter, partition });
            result.observe(shed, p.shed, { limiter, partition });
          }
        }
        result.observe(decisions, c.admitted, { limiter, outcome: 'admitted' });
        result.observe(decisions, c.delayed - c.dryRunDelayed, { limiter, outcome: 'delayed' });
        result.observe(decisions, c.limited - c.dryRunLimited, { limiter, outcome: 'limited' });
        if (c.dryRun) {
          result.observe(decisions, c.dryRunDelayed, { limiter, outcome: 'delayed', dry_run: 'true' });
          result.observe(decisions, c.dryRunLimited, { limiter, outcome: 'limited', dry_run: 'true' });
        }
        if (!c.remote) continue;
        result.observe(degraded, c.insurance, { limiter, mode: 'insurance' });
        result.observe(degraded, c.failOpen, { limiter, mode: 'fail-open' });
        result.observe(degraded, c.failClosed, { limiter, mode: 'fail-closed' });
        result.observe(errors, c.timeouts, { limiter, kind: 'timeout' });
        result.observe(errors, c.errors, { limiter, kind: 'error' });
        result.observe(hits, c.blockCacheHits, { limiter });
        result.observe(leases, c.leaseCalls, { limiter });
        result.observe(up, c.up, { limiter });
      }
    },
    [decisions, degraded, errors, hits, leases, up, inFlight, queued, adaptiveLimit, shed],
  );
  return metrics;
}
