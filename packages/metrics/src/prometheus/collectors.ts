import { Counter, Gauge, type Metric, type Registry } from 'prom-client';
import { DURATION_BUCKETS, type LimiterCounts } from '../counting/limiter-counts';

/** Every metric name this package registers, as DESIGN.md lists them. */
export const METRIC_NAMES = [
  'sluice_decisions_total',
  'sluice_degraded_decisions_total',
  'sluice_store_errors_total',
  'sluice_store_duration_seconds',
  'sluice_store_up',
  'sluice_block_cache_hits_total',
  'sluice_lease_calls_total',
  'sluice_in_flight',
  'sluice_queued',
  'sluice_adaptive_limit',
  'sluice_shed_total',
] as const;

type Limiters = ReadonlyMap<string, LimiterCounts>;

/**
 * Registers sluice's metrics in `registry`. Each one reads the limiters' counts in `collect()`,
 * when Prometheus scrapes, so a decision costs only its increments. Store series are reported
 * for limiters on a remote store (Redis) only, dry-run series for limiters in dry run only.
 */
export function registerCollectors(registry: Registry, limiters: Limiters): void {
  const registers = [registry];
  const remote = (): LimiterCounts[] => [...limiters.values()].filter((counts) => counts.remote);

  new Counter({
    name: 'sluice_decisions_total',
    help: 'Decisions of sluice limiters, by outcome (admitted, delayed, limited); dry_run="true": let through by dryRun.',
    labelNames: ['limiter', 'outcome', 'dry_run'],
    registers,
    collect() {
      this.reset();
      for (const c of limiters.values()) {
        const limiter = c.name;
        this.inc({ limiter, outcome: 'admitted' }, c.admitted);
        this.inc({ limiter, outcome: 'delayed' }, c.delayed - c.dryRunDelayed);
        this.inc({ limiter, outcome: 'limited' }, c.limited - c.dryRunLimited);
        if (c.dryRun) {
          this.inc({ limiter, outcome: 'delayed', dry_run: 'true' }, c.dryRunDelayed);
          this.inc({ limiter, outcome: 'limited', dry_run: 'true' }, c.dryRunLimited);
        }
      }
    },
  });
  new Counter({
    name: 'sluice_degraded_decisions_total',
    help: 'Decisions made without the store (down, or slower than timeoutMs), by onStoreError mode.',
    labelNames: ['limiter', 'mode'],
    registers,
    collect() {
      this.reset();
      for (const c of remote()) {
        this.inc({ limiter: c.name, mode: 'insurance' }, c.insurance);
        this.inc({ limiter: c.name, mode: 'fail-open' }, c.failOpen);
        this.inc({ limiter: c.name, mode: 'fail-closed' }, c.failClosed);
      }
    },
  });
  new Counter({
    name: 'sluice_store_errors_total',
    help: 'Failed store calls: slower than timeoutMs (timeout) or failed otherwise (error).',
    labelNames: ['limiter', 'kind'],
    registers,
    collect() {
      this.reset();
      for (const c of remote()) {
        this.inc({ limiter: c.name, kind: 'timeout' }, c.timeouts);
        this.inc({ limiter: c.name, kind: 'error' }, c.errors);
      }
    },
  });
  registry.registerMetric(durationHistogram(remote));
  new Gauge({
    name: 'sluice_store_up',
    help: "1 while the limiter's store answers, 0 while its circuit (on Redis Cluster, a master's) is open (requests kept away from it).",
    labelNames: ['limiter'],
    registers,
    collect() {
      this.reset();
      for (const c of remote()) this.set({ limiter: c.name }, c.up);
    },
  });
  new Counter({
    name: 'sluice_block_cache_hits_total',
    help: 'Requests refused by the block cache, without a store call.',
    labelNames: ['limiter'],
    registers,
    collect() {
      this.reset();
      for (const c of remote()) this.inc({ limiter: c.name }, c.blockCacheHits);
    },
  });
  new Counter({
    name: 'sluice_lease_calls_total',
    help: 'Store calls made by lease (each fetching units for this instance).',
    labelNames: ['limiter'],
    registers,
    collect() {
      this.reset();
      for (const c of remote()) this.inc({ limiter: c.name }, c.leaseCalls);
    },
  });
  // Concurrency and adaptive limiters: read from their stats() at scrape time, so nothing runs
  // per request. Adaptive series carry a `partition` label (a name of `shares`, or '*').
  const concurrent = (): LimiterCounts[] =>
    [...limiters.values()].filter((counts) => counts.concurrency !== undefined);
  const adaptive = () =>
    [...limiters.values()]
      .filter((counts) => counts.adaptive !== undefined)
      .map((counts) => ({ limiter: counts.name, ...counts.adaptiveStats() }));
  new Gauge({
    name: 'sluice_in_flight',
    help: 'Requests in flight now in this process: permits of concurrency limiters, and of adaptive limiters by partition.',
    labelNames: ['limiter', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const c of concurrent()) this.set({ limiter: c.name }, c.stats().inFlight);
      for (const { limiter, partitions } of adaptive())
        for (const [partition, p] of partitions) this.set({ limiter, partition }, p.inFlight);
    },
  });
  new Gauge({
    name: 'sluice_queued',
    help: "Requests waiting now in this process's concurrency and adaptive limiter queues.",
    labelNames: ['limiter', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const c of concurrent()) this.set({ limiter: c.name }, c.stats().queued);
      for (const { limiter, partitions } of adaptive())
        for (const [partition, p] of partitions) this.set({ limiter, partition }, p.queued);
    },
  });
  new Gauge({
    name: 'sluice_adaptive_limit',
    help: "Adaptive limiters' limit of requests in flight now, by partition: its guaranteed part (summed over partitions, the limit).",
    labelNames: ['limiter', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const { limiter, partitions } of adaptive())
        for (const [partition, p] of partitions) this.set({ limiter, partition }, p.limit);
    },
  });
  new Counter({
    name: 'sluice_shed_total',
    help: 'Requests adaptive limiters refused (shed), by partition.',
    labelNames: ['limiter', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const { limiter, partitions } of adaptive())
        for (const [partition, p] of partitions) this.inc({ limiter, partition }, p.shed);
    },
  });
}

/**
 * `sluice_store_duration_seconds{limiter, store}`: prom-client's `Histogram` takes observations
 * one by one (hashing its labels each time); here the store path adds to a bucket array and the
 * histogram is built from it at scrape time, in the shape prom-client's registry formats.
 */
function durationHistogram(remote: () => LimiterCounts[]): Metric {
  const name = 'sluice_store_duration_seconds';
  const histogram = {
    name,
    help: 'Duration of store calls (remote stores), in seconds, failures and timeouts included.',
    type: 'histogram',
    aggregator: 'sum',
    reset(): void {
      // The counts belong to the limiters: they are read afresh at every scrape.
    },
    get() {
      const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> =
        [];
      for (const c of remote()) {
        const labels = { limiter: c.name, store: c.store };
        let cumulative = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += c.durations[i] as number;
          values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
        });
        values.push({
          labels: { ...labels, le: '+Inf' },
          value: c.durationCount,
          metricName: `${name}_bucket`,
        });
        values.push({ labels, value: c.durationSum, metricName: `${name}_sum` });
        values.push({ labels, value: c.durationCount, metricName: `${name}_count` });
      }
      return Promise.resolve({ name, help: histogram.help, type: 'histogram', values, aggregator: 'sum' });
    },
  };
  return histogram as unknown as Metric;
}
