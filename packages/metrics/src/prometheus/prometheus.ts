import { SluiceConfigError } from '@sluice/core';
import { checkOptionNames } from '@sluice/core/adapter';
import { register as defaultRegistry, type Registry } from 'prom-client';
import { countsOf, SluiceMetrics, type CountingOptions } from '../counting/sluice-metrics';
import { METRIC_NAMES, registerCollectors } from './collectors';

/** Options of {@link prometheus}. */
export interface PrometheusOptions extends CountingOptions {
  /** The prom-client registry to register the metrics in. @defaultValue prom-client's default registry (`register`) */
  registry?: Registry;
}

const OPTION_NAMES: ReadonlySet<string> = new Set(['registry', 'hotKeys', 'clock']);

/**
 * Counts what every limiter given it as `metrics` decides, for Prometheus: the metrics below,
 * registered in `registry`, read from plain counters when scraped (a decision costs a few
 * increments and allocates nothing). Key text is never a label: the most requested keys are
 * kept apart, in bounded memory ({@link SluiceMetrics.hotKeys}), and shown on the dashboard.
 *
 * - `sluice_decisions_total{limiter, outcome}`: `admitted` | `delayed` | `limited`; what
 *   `dryRun` let through carries `dry_run="true"` as well;
 * - `sluice_blocked_total{limiter}`: refusals of keys serving a block (`block` option), also
 *   in `sluice_decisions_total` as `limited`;
 * - `sluice_degraded_decisions_total{limiter, mode}`: `insurance` | `fail-open` | `fail-closed`;
 * - `sluice_store_errors_total{limiter, kind}`: `timeout` | `error`;
 * - `sluice_store_duration_seconds{limiter, store}`: histogram of store calls;
 * - `sluice_store_up{limiter}`: 1 while the store answers, 0 while its circuit is open (on
 *   Redis Cluster, any master's that requests still reach);
 * - `sluice_block_cache_hits_total{limiter}`, `sluice_lease_calls_total{limiter}`;
 * - `sluice_refunded_total{limiter}`: admitted requests given back because their response did
 *   not count (`countWhen`), for limiters that gave any back;
 * - concurrency limiters: `sluice_in_flight{limiter}` and `sluice_queued{limiter}`, gauges of the
 *   permits held and requests waiting in this process (read from `stats()` when scraped); their
 *   decisions count in `sluice_decisions_total`, one admitted after waiting in the queue as `delayed`.
 *
 * The store series appear for limiters on a remote store (Redis) only. `limiter` is the
 * limiter's `name` (default: its `prefix`, made printable, a long one shortened with a digest);
 * limiters with the same name share their series.
 *
 * @param options - `registry`, `hotKeys`, `clock`
 * @throws `SluiceConfigError` naming an unknown option, a `registry` that is not a prom-client
 * registry or already holds sluice's metrics, or a bad `hotKeys`
 * @example
 * ```ts
 * import { Registry } from 'prom-client';
 * import { prometheus } from '@sluice/metrics';
 *
 * const registry = new Registry();
 * const metrics = prometheus({ registry });
 * app.use(rateLimit({ name: 'per-ip', rate: '10r/s', metrics }));
 * app.get('/metrics', async (_req, res) => res.type(registry.contentType).send(await registry.metrics()));
 * ```
 */
export function prometheus(options: PrometheusOptions = {}): SluiceMetrics {
  if (typeof options !== 'object' || options === null)
    throw new SluiceConfigError('options', options, 'expected an object such as { registry }');
  checkOptionNames(options, OPTION_NAMES);
  const registry = checkRegistry(options.registry ?? defaultRegistry);
  const metrics = new SluiceMetrics(options);
  registerCollectors(registry, countsOf(metrics) as NonNullable<ReturnType<typeof countsOf>>);
  return metrics;
}

/** A prom-client registry, told by what sluice uses of it (two copies of prom-client may coexist). */
function checkRegistry(registry: unknown): Registry {
  const candidate = registry as Partial<Registry> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.registerMetric !== 'function' ||
    typeof candidate.getSingleMetric !== 'function' ||
    typeof candidate.metrics !== 'function'
  ) {
    throw new SluiceConfigError(
      'registry',
      registry,
      "expected a prom-client Registry (new Registry() from 'prom-client')",
    );
  }
  const taken = METRIC_NAMES.find((name) => candidate.getSingleMetric?.(name) !== undefined);
  if (taken !== undefined) {
    throw new SluiceConfigError(
      'registry',
      registry,
      `already holds ${taken}: call prometheus() once per registry and give the same metrics to every limiter`,
    );
  }
  return registry as Registry;
}
