import type {
  AdaptiveDecision,
  AdaptivePartitionStats,
  AdaptiveStats,
  ConcurrencyDecision,
  ConcurrencyStats,
  Decision,
  LimiterInfo,
  LimiterMetrics,
} from '@sluice/core';
import { ADMITTED, DELAYED, LIMITED, SpaceSaving } from '../hot-keys/space-saving';

/** Upper bounds of the store-call duration buckets, in seconds (Prometheus `le`); +Inf follows. */
export const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
] as const;

/**
 * Everything counted for one limiter name, in plain number fields: the request path only adds
 * to them, and exporters read them when asked (a Prometheus scrape, the dashboard's tick).
 * Limiters with the same name share one.
 */
export class LimiterCounts {
  readonly name: string;
  /** The first remote store's kind seen under this name (`'memory'` while none). */
  store: LimiterInfo['store'];
  /** Whether any limiter of this name uses a remote store: only then are store series reported. */
  remote: boolean;
  /** Whether any limiter of this name is in dry run: only then are dry-run series reported. */
  dryRun: boolean;

  admitted = 0;
  delayed = 0;
  limited = 0;
  /** Delays and refusals `dryRun` let through (also in `delayed` / `limited`). */
  dryRunDelayed = 0;
  dryRunLimited = 0;
  insurance = 0;
  failOpen = 0;
  failClosed = 0;
  timeouts = 0;
  errors = 0;
  /** 1 while the store answers, 0 while its circuit (on Redis Cluster, a master's) is open. */
  up = 1;
  blockCacheHits = 0;
  leaseCalls = 0;
  /** Store calls per duration bucket (not cumulative); the last one is above every bound. */
  readonly durations = new Float64Array(DURATION_BUCKETS.length + 1);
  durationSum = 0;
  durationCount = 0;
  /** Told of each store call too (an exporter that records durations as they come: OpenTelemetry). */
  onStoreCall: ((seconds: number) => void) | undefined = undefined;
  /** The most requested keys; `undefined` when hot keys are off. */
  readonly hotKeys: SpaceSaving | undefined;
  /**
   * Concurrency limiters of this name, held weakly (a dropped limiter is not kept alive by its
   * metrics); `undefined` while none: only then are in-flight and queued series reported.
   */
  concurrency: Array<WeakRef<{ stats(): ConcurrencyStats }>> | undefined = undefined;

  /**
   * Adaptive limiters of this name, held weakly as `concurrency`; `undefined` while none: only
   * then are the adaptive series reported.
   */
  adaptive: Array<WeakRef<{ stats(): AdaptiveStats }>> | undefined = undefined;

  constructor(info: LimiterInfo, hotKeys: number) {
    this.name = info.name;
    this.store = info.store;
    this.remote = info.remote;
    this.dryRun = info.dryRun;
    this.hotKeys = hotKeys > 0 ? new SpaceSaving(hotKeys) : undefined;
  }

  /** Another limiter reports under this name: what it adds to the series. */
  join(info: LimiterInfo): void {
    if (info.remote && !this.remote) this.store = info.store;
    this.remote ||= info.remote;
    this.dryRun ||= info.dryRun;
  }

  /** In flight and queued now, over this name's live concurrency limiters (in this process). */
  stats(): ConcurrencyStats {
    let inFlight = 0;
    let queued = 0;
    const live = (this.concurrency ?? []).filter((ref) => {
      const stats = ref.deref()?.stats();
      if (stats === undefined) return false;
      inFlight += stats.inFlight;
      queued += stats.queued;
      return true;
    });
    if (this.concurrency !== undefined) this.concurrency = live;
    return { inFlight, queued };
  }

  /**
   * The limit (summed over this name's live adaptive limiters) and each partition's counts now
   * (summed likewise).
   */
  adaptiveStats(): { limit: number; partitions: Map<string, AdaptivePartitionStats> } {
    let limit = 0;
    const partitions = new Map<string, AdaptivePartitionStats>();
    const live = (this.adaptive ?? []).filter((ref) => {
      const stats = ref.deref()?.stats();
      if (stats === undefined) return false;
      limit += stats.limit;
      for (const [name, p] of Object.entries(stats.partitions)) {
        const sum = partitions.get(name);
        partitions.set(
          name,
          sum === undefined
            ? p
            : {
                limit: sum.limit + p.limit,
                inFlight: sum.inFlight + p.inFlight,
                queued: sum.queued + p.queued,
                shed: sum.shed + p.shed,
              },
        );
      }
      return true;
    });
    if (this.adaptive !== undefined) this.adaptive = live;
    return { limit, partitions };
  }

  /** Records a store call of `seconds`. */
  observe(seconds: number): void {
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[bucket] as number)) bucket++;
    this.durations[bucket] = (this.durations[bucket] as number) + 1;
    this.durationSum += seconds;
    this.durationCount++;
    this.onStoreCall?.(seconds);
  }
}

/**
 * What one limiter reports to, bound to its name's counts. A limiter in dry run has its own
 * recorder over the same counts, so its refusals and delays also count as dry-run ones.
 */
export class LimiterRecorder implements LimiterMetrics {
  readonly #counts: LimiterCounts;
  readonly #dryRun: boolean;
  readonly #clock: () => number;

  constructor(counts: LimiterCounts, dryRun: boolean, clock: () => number) {
    this.#counts = counts;
    this.#dryRun = dryRun;
    this.#clock = clock;
  }

  decided(decision: Decision): void {
    this.#count(decision, decision.delayMs > 0);
  }

  /** A concurrency decision: one that waited in the queue for its permit counts as delayed. */
  acquired(decision: ConcurrencyDecision): void {
    this.#count(decision, decision.waitedMs > 0);
  }

  watch(limiter: { stats(): ConcurrencyStats }): void {
    (this.#counts.concurrency ??= []).push(new WeakRef(limiter));
  }

  watchAdaptive(limiter: { stats(): AdaptiveStats }): void {
    (this.#counts.adaptive ??= []).push(new WeakRef(limiter));
  }

  /** An adaptive decision: counted as the others (no key: no hot keys); one that waited counts as delayed. */
  adaptiveDecided(decision: AdaptiveDecision): void {
    const counts = this.#counts;
    if (!decision.allowed) {
      counts.limited++;
      if (this.#dryRun) counts.dryRunLimited++;
    } else if (decision.waitedMs > 0) counts.delayed++;
    else counts.admitted++;
  }

  #count(decision: Decision | ConcurrencyDecision, delayed: boolean): void {
    const counts = this.#counts;
    let outcome: typeof ADMITTED | typeof DELAYED | typeof LIMITED;
    if (!decision.allowed) {
      outcome = LIMITED;
      counts.limited++;
      if (this.#dryRun) counts.dryRunLimited++;
    } else if (delayed) {
      outcome = DELAYED;
      counts.delayed++;
      if (this.#dryRun) counts.dryRunDelayed++;
    } else {
      outcome = ADMITTED;
      counts.admitted++;
    }
    const degraded = decision.degraded;
    if (degraded !== undefined) {
      if (degraded === 'insurance') counts.insurance++;
      else if (degraded === 'fail-open') counts.failOpen++;
      else counts.failClosed++;
    }
    counts.hotKeys?.add(decision.key, outcome, this.#clock());
  }

  storeCall(seconds: number): void {
    this.#counts.observe(seconds);
  }

  storeError(kind: 'timeout' | 'error'): void {
    if (kind === 'timeout') this.#counts.timeouts++;
    else this.#counts.errors++;
  }

  storeUp(up: boolean): void {
    this.#counts.up = up ? 1 : 0;
  }

  blockCacheHit(): void {
    this.#counts.blockCacheHits++;
  }

  leaseCall(): void {
    this.#counts.leaseCalls++;
  }
}
