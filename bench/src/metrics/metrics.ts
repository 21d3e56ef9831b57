import { spawnTsChild } from '../child';
import { METRICS_FRAMEWORKS, METRICS_VARIANTS, variantId, type Framework } from '../http/apps';
import { runFramework } from '../http/http';
import { median, round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';

/** The in-memory admitted path of one framework with `metrics` against the same without. */
export interface MetricsHttpRow {
  readonly framework: Framework;
  /** Median over the rounds of (with metrics ÷ without) requests/s, each run against the bare runs around it. */
  readonly ratio: number;
  readonly ratios: readonly number[];
  /** The same from server CPU time per request. */
  readonly cpuRatio: number;
  readonly rps: number;
  readonly rpsWithout: number;
}

/** What the metrics section measured (issue 13's goals). */
export interface MetricsResult {
  readonly http: readonly MetricsHttpRow[];
  /** ns per in-memory admission of the HTTP layer (`decideSync`), without and with metrics, one key and 10 000. */
  readonly decideNs: Readonly<Record<string, number>>;
  readonly scrape: {
    readonly limiters: number;
    readonly medianMs: number;
    readonly p99Ms: number;
    readonly bytes: number;
  };
  readonly hotKeys: {
    readonly fewKeys: number;
    readonly manyKeys: number;
    readonly fewBytes: number;
    readonly manyBytes: number;
    readonly slicedBytes: number;
  };
  readonly notes: readonly string[];
}

/**
 * `@sluice/metrics`: the in-memory HTTP admitted path with `metrics` vs without (each framework,
 * interleaved with the bare app as the http section does, twice its rounds: the goal is a 3 %
 * difference), the time of `registry.metrics()` with 50 limiters, and the heap of the hot keys
 * after 10 000 and 1 000 000 distinct keys.
 */
export async function runMetrics(settings: Settings, pinned: boolean): Promise<MetricsResult> {
  const rounds = settings.httpRounds * 2;
  const loadgen = spawnTsChild('http/loadgen-child.ts', pinned ? { cpu: 1 } : {});
  const http: MetricsHttpRow[] = [];
  try {
    await loadgen.first('ready');
    for (const framework of METRICS_FRAMEWORKS) {
      const { rows } = await runFramework(
        framework,
        loadgen,
        undefined,
        { ...settings, httpRounds: rounds },
        pinned ? 0 : undefined,
        METRICS_VARIANTS,
      );
      const [without, withMetrics] = METRICS_VARIANTS.map(
        (variant) => rows.find((row) => row.id === variantId(variant)) as (typeof rows)[number],
      ) as [(typeof rows)[number], (typeof rows)[number]];
      const ratios = withMetrics.ratios.map((r, i) => r / (without.ratios[i] ?? Number.NaN));
      http.push({
        framework,
        ratio: round(median(ratios), 3),
        ratios: ratios.map((r) => round(r, 3)),
        cpuRatio: round(withMetrics.cpuRatio / without.cpuRatio, 3),
        rps: withMetrics.rps,
        rpsWithout: without.rps,
      });
      progress('metrics', framework, `with metrics ${round(median(ratios), 3)} × without`);
    }
  } finally {
    await loadgen.stop();
  }
  progress('metrics', 'scrape time and hot-key heap (child with --expose-gc)');
  const child = spawnTsChild('metrics/metrics-child.ts', {
    nodeArgs: ['--expose-gc'],
    env: settings.memoryKeys < 1_000_000 ? { BENCH_HOT_KEYS: String(settings.memoryKeys) } : {},
  });
  try {
    const result = await child.first('result');
    return {
      http,
      decideNs: result.decideNs as MetricsResult['decideNs'],
      scrape: result.scrape as MetricsResult['scrape'],
      hotKeys: result.hotKeys as MetricsResult['hotKeys'],
      notes: [
        `HTTP: the http section's apps (GET /, MemoryStore, admitted), sluice without and with metrics: prometheus() (name, 128 hot-key counters); ${rounds} rounds of B L B L B, each limited run against the bare runs around it, the ratio of the two per round, median`,
        'in process: ns per admission of the HTTP layer (createHttpLimiter().decideSync, as every adapter calls it, MemoryStore), without and with metrics, one key and 10 000 rotating keys (each new to the 128-counter hot-key summary), 7 interleaved rounds of 200 ms, median',
        'scrape: registry.metrics() of prom-client 15 with 50 limiter names (half on a remote store, so with every store series and the histogram), median and p99 of 200 scrapes after 20',
        'hot keys: heap growth (4 full GCs) of one limiter name after N distinct keys through the recorder; keys are the caller’s garbage, as a request’s are',
      ],
    };
  } finally {
    await child.stop();
  }
}
