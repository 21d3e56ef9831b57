import { DURATION_BUCKETS, type LimiterCounts } from '../counting/limiter-counts';
import type { HotKey } from '../hot-keys/space-saving';

/** Points of the chart kept per limiter: 5 minutes at one a second. */
export const HISTORY_POINTS = 300;
/** Ticks over which store latency percentiles are taken: the last minute at one a second. */
const LATENCY_TICKS = 60;
/** Limiters the dashboard follows; names beyond are left out (a name is a route or a zone, not a client). */
export const MAX_LIMITERS = 200;
/** Hot keys shown per limiter. */
const HOT_KEYS_SHOWN = 10;

/** One limiter as the page shows it at a tick. */
export interface LimiterFrame {
  readonly name: string;
  readonly store: string;
  readonly remote: boolean;
  readonly dryRun: boolean;
  /** Per second over the last tick: admitted, delayed, limited. */
  readonly rate: readonly [number, number, number];
  readonly totals: {
    readonly admitted: number;
    readonly delayed: number;
    readonly limited: number;
    readonly dryRunDelayed: number;
    readonly dryRunLimited: number;
  };
  readonly degraded: {
    readonly insurance: number;
    readonly 'fail-open': number;
    readonly 'fail-closed': number;
  };
  /** Remote stores only. Latencies in ms over the last minute, `null` without calls. */
  readonly storeHealth: {
    readonly up: boolean;
    readonly timeouts: number;
    readonly errors: number;
    readonly calls: number;
    readonly p50: number | null;
    readonly p90: number | null;
    readonly p99: number | null;
    readonly blockCacheHits: number;
    readonly leaseCalls: number;
  } | null;
  /** Concurrency limiters only: permits held and requests queued now, in this process. */
  readonly concurrency: { readonly inFlight: number; readonly queued: number } | null;
  /**
   * Adaptive limiters only: the limit, requests in flight and queued now, and requests shed so
   * far (over this name's limiters in this process).
   */
  readonly adaptive: {
    readonly limit: number;
    readonly inFlight: number;
    readonly queued: number;
    readonly shed: number;
  } | null;
  readonly hotKeys: readonly HotKey[];
}

/** What one limiter's history holds between ticks. */
class Track {
  readonly series = [
    new Float64Array(HISTORY_POINTS),
    new Float64Array(HISTORY_POINTS),
    new Float64Array(HISTORY_POINTS),
  ];
  /** Adaptive limiters: the limit and the requests in flight at each tick, as `series`. */
  readonly adaptive = [new Float64Array(HISTORY_POINTS), new Float64Array(HISTORY_POINTS)];
  /** Store calls per bucket since the start, as of each of the last ticks: a ring. */
  readonly latency = new Float64Array((LATENCY_TICKS + 1) * (DURATION_BUCKETS.length + 1));
  points = 0;
  latencyTicks = 0;
  last: [number, number, number];

  /** @param since - the counts to chart from: now for a limiter older than the dashboard, else zero */
  constructor(
    readonly counts: LimiterCounts,
    since: 'now' | 'zero',
  ) {
    this.last = since === 'now' ? [counts.admitted, counts.delayed, counts.limited] : [0, 0, 0];
  }
}

/**
 * What the dashboard shows, sampled from the limiters' counts at each tick: the admitted /
 * delayed / limited rates of the last {@link HISTORY_POINTS} ticks and the store latency of the
 * last minute, in fixed arrays per limiter — memory does not grow with time or traffic.
 */
export class History {
  readonly #tracks = new Map<string, Track>();
  #tick = 0;

  constructor(
    private readonly limiters: ReadonlyMap<string, LimiterCounts>,
    private readonly intervalMs: number,
    private readonly hotKeys: (name: string, n: number) => HotKey[],
  ) {
    // What limiters decided before the dashboard existed is in the totals, not in the chart.
    for (const counts of limiters.values()) this.#track(counts, 'now');
  }

  #track(counts: LimiterCounts, since: 'now' | 'zero'): Track | undefined {
    let track = this.#tracks.get(counts.name);
    if (track === undefined && this.#tracks.size < MAX_LIMITERS)
      this.#tracks.set(counts.name, (track = new Track(counts, since)));
    return track;
  }

  /** Whether a sample was taken yet (frames need one). */
  get sampled(): boolean {
    return this.#tick > 0;
  }

  /** Takes one sample of every limiter. */
  sample(): void {
    for (const counts of this.limiters.values()) {
      const track = this.#track(counts, 'zero');
      if (track === undefined) continue;
      const now = [counts.admitted, counts.delayed, counts.limited] as const;
      const at = this.#tick % HISTORY_POINTS;
      for (let i = 0; i < 3; i++) {
        (track.series[i] as Float64Array)[at] =
          (((now[i] as number) - (track.last[i] as number)) * 1000) / this.intervalMs;
      }
      track.last = [...now];
      if (counts.adaptive !== undefined) {
        const { limit, inFlight } = adaptiveNow(counts);
        (track.adaptive[0] as Float64Array)[at] = limit;
        (track.adaptive[1] as Float64Array)[at] = inFlight;
      }
      track.points = Math.min(HISTORY_POINTS, track.points + 1);
      const width = DURATION_BUCKETS.length + 1;
      const row = (this.#tick % (LATENCY_TICKS + 1)) * width;
      for (let b = 0; b < width; b++) track.latency[row + b] = counts.durations[b] as number;
      track.latencyTicks = Math.min(LATENCY_TICKS + 1, track.latencyTicks + 1);
    }
    this.#tick++;
  }

  /**
   * Every limiter's chart, oldest point first, for a page that just connected; adaptive limiters
   * also their limit and requests in flight at each tick.
   */
  series(): Array<{
    name: string;
    admitted: number[];
    delayed: number[];
    limited: number[];
    adaptive?: { limit: number[]; inFlight: number[] };
  }> {
    return [...this.#tracks.values()].map((track) => {
      const [admitted, delayed, limited] = track.series.map((s) => this.#ordered(s, track.points)) as [
        number[],
        number[],
        number[],
      ];
      const series = { name: track.counts.name, admitted, delayed, limited };
      if (track.counts.adaptive === undefined) return series;
      const [limit, inFlight] = track.adaptive.map((s) => this.#ordered(s, track.points)) as [
        number[],
        number[],
      ];
      return { ...series, adaptive: { limit, inFlight } };
    });
  }

  /** Every limiter as of the last sample. */
  frames(): LimiterFrame[] {
    const last = (this.#tick - 1 + HISTORY_POINTS) % HISTORY_POINTS;
    return [...this.#tracks.values()].map((track) => {
      const c = track.counts;
      return {
        name: c.name,
        store: c.store,
        remote: c.remote,
        dryRun: c.dryRun,
        rate: [0, 1, 2].map((i) => (track.series[i] as Float64Array)[last] as number) as [
          number,
          number,
          number,
        ],
        totals: {
          admitted: c.admitted,
          delayed: c.delayed,
          limited: c.limited,
          dryRunDelayed: c.dryRunDelayed,
          dryRunLimited: c.dryRunLimited,
        },
        degraded: { insurance: c.insurance, 'fail-open': c.failOpen, 'fail-closed': c.failClosed },
        storeHealth: c.remote
          ? {
              up: c.up === 1,
              ...this.#latency(track),
              timeouts: c.timeouts,
              errors: c.errors,
              blockCacheHits: c.blockCacheHits,
              leaseCalls: c.leaseCalls,
            }
          : null,
        concurrency: c.concurrency === undefined ? null : c.stats(),
        adaptive: c.adaptive === undefined ? null : adaptiveNow(c),
        hotKeys: this.hotKeys(c.name, HOT_KEYS_SHOWN),
      };
    });
  }

  #ordered(ring: Float64Array, points: number): number[] {
    const out: number[] = [];
    for (let i = points; i > 0; i--) {
      out.push(
        Math.round((ring[(this.#tick - i + HISTORY_POINTS * 2) % HISTORY_POINTS] as number) * 100) / 100,
      );
    }
    return out;
  }

  /** Store calls and their p50 / p90 / p99 over the last minute, in ms. */
  #latency(track: Track): { calls: number; p50: number | null; p90: number | null; p99: number | null } {
    const width = DURATION_BUCKETS.length + 1;
    const newest = ((this.#tick - 1) % (LATENCY_TICKS + 1)) * width;
    const oldest = track.latencyTicks <= LATENCY_TICKS ? -1 : (this.#tick % (LATENCY_TICKS + 1)) * width;
    const counts: number[] = [];
    for (let b = 0; b < width; b++) {
      const then = oldest < 0 ? 0 : (track.latency[oldest + b] as number);
      counts.push((track.latency[newest + b] as number) - then);
    }
    const calls = counts.reduce((a, b) => a + b, 0);
    return {
      calls,
      p50: quantileMs(counts, calls, 0.5),
      p90: quantileMs(counts, calls, 0.9),
      p99: quantileMs(counts, calls, 0.99),
    };
  }
}

/** An adaptive limiter name's counts now, summed over its partitions. */
function adaptiveNow(counts: LimiterCounts): {
  limit: number;
  inFlight: number;
  queued: number;
  shed: number;
} {
  const { limit, partitions } = counts.adaptiveStats();
  let [inFlight, queued, shed] = [0, 0, 0];
  for (const p of partitions.values()) {
    inFlight += p.inFlight;
    queued += p.queued;
    shed += p.shed;
  }
  return { limit, inFlight, queued, shed };
}

/**
 * A quantile of bucketed durations, in ms, interpolated inside its bucket as Prometheus'
 * `histogram_quantile` does; in the open last bucket, the highest bound.
 *
 * @param counts - calls per bucket (not cumulative), the last one above every bound
 */
export function quantileMs(counts: readonly number[], total: number, q: number): number | null {
  if (total <= 0) return null;
  const rank = q * total;
  let below = 0;
  for (let b = 0; b < counts.length; b++) {
    const inBucket = counts[b] as number;
    if (below + inBucket >= rank && inBucket > 0) {
      if (b >= DURATION_BUCKETS.length) break;
      const lower = b === 0 ? 0 : (DURATION_BUCKETS[b - 1] as number);
      const upper = DURATION_BUCKETS[b] as number;
      return Math.round((lower + ((upper - lower) * (rank - below)) / inBucket) * 1e6) / 1e3;
    }
    below += inBucket;
  }
  return (DURATION_BUCKETS[DURATION_BUCKETS.length - 1] as number) * 1000;
}
