import { SluiceConfigError, type LimiterInfo, type LimiterMetrics, type MetricsSink } from '@sluice/core';
import type { HotKey } from '../hot-keys/space-saving';
import { coarseNow } from './coarse-clock';
import { LimiterCounts, LimiterRecorder } from './limiter-counts';

/** Counters per hot-key summary when `hotKeys` does not say. */
export const DEFAULT_HOT_KEYS = 128;
const MAX_HOT_KEYS = 10_000;

/** How counting is set up: the part of the options every exporter shares. */
export interface CountingOptions {
  /**
   * Hot keys: `{ size }` counters per limiter name (the error bound is the weighted total over
   * `size`: more counters, tighter counts), or `false` to keep none (one `Map` lookup less per
   * decision).
   * @defaultValue `{ size: 128 }`
   */
  hotKeys?: { size?: number } | false;
  /** Epoch ms for the hot keys' decay; tests inject one. @defaultValue `Date.now()` to within 100 ms (one shared, unreferenced timer) */
  clock?: () => number;
}

/** The counts behind each metrics object, for the exporters and the dashboard of this package. */
const registries = new WeakMap<SluiceMetrics, ReadonlyMap<string, LimiterCounts>>();

/**
 * What every limiter reports to, by name, in plain counters: give it to limiters and adapters
 * as their `metrics` option. Made by `prometheus()`; read by Prometheus at scrape time and by
 * `dashboard()`.
 */
export class SluiceMetrics implements MetricsSink {
  readonly #limiters = new Map<string, LimiterCounts>();
  readonly #hotKeys: number;
  readonly #clock: () => number;

  readonly #created: ((counts: LimiterCounts) => void) | undefined;

  /**
   * @internal use `prometheus()` or `openTelemetry()`
   * @param created - told of each limiter name's counts as they are created (an exporter's hook)
   */
  constructor(options: CountingOptions, created?: (counts: LimiterCounts) => void) {
    this.#created = created;
    this.#hotKeys = resolveHotKeys(options.hotKeys);
    const { clock = coarseNow } = options;
    if (typeof clock !== 'function')
      throw new SluiceConfigError('clock', clock, 'must be a function returning epoch milliseconds');
    this.#clock = clock;
    registries.set(this, this.#limiters);
  }

  /**
   * Called by each limiter once, at creation (see `MetricsSink`). Limiters with the same `name`
   * share every counter and the hot keys.
   */
  limiter(info: LimiterInfo): LimiterMetrics {
    let counts = this.#limiters.get(info.name);
    if (counts === undefined) {
      this.#limiters.set(info.name, (counts = new LimiterCounts(info, this.#hotKeys)));
      this.#created?.(counts);
    } else counts.join(info);
    return new LimiterRecorder(counts, info.dryRun, this.#clock);
  }

  /**
   * The `n` most requested keys of the limiter named `name`, most requested first, with their
   * admitted, delayed and limited counts — recent requests weighing most (a request counts
   * `e^(-age / 60 s)`, so a steady key's `requests` is about its requests over the last minute).
   *
   * From a Space-Saving summary of `hotKeys.size` counters (default 128), whatever the number of
   * distinct keys: each `requests` is an upper bound, at most `error` above the true weighted
   * count, and `error` never exceeds the weighted total of the limiter's requests divided by
   * `size`. Every key with more than that share is listed. `admitted`, `delayed` and `limited`
   * count only since the key last entered the summary. A key over 200 characters is shown as
   * its first 160, its length and a hash. Empty for a name no limiter has used, or without hot keys.
   *
   * @param name - the limiter's `name` (default: its `prefix`)
   * @param n - how many keys at most (no more than `hotKeys.size` are kept) @defaultValue 10
   * @throws `SluiceConfigError` when `name` is not a string or `n` is out of range
   */
  hotKeys(name: string, n = 10): HotKey[] {
    if (typeof name !== 'string')
      throw new SluiceConfigError('name', name, 'must be the name of a limiter', 'SLUICE_INVALID_ARGUMENT');
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_HOT_KEYS)
      throw new SluiceConfigError(
        'n',
        n,
        `must be a whole number from 1 to ${MAX_HOT_KEYS}`,
        'SLUICE_INVALID_ARGUMENT',
      );
    return this.#limiters.get(name)?.hotKeys?.top(n, this.#clock()) ?? [];
  }

  /** The limiter names reported so far, in the order they appeared. */
  names(): string[] {
    return [...this.#limiters.keys()];
  }
}

/** The counts behind a metrics object made by this package (`undefined` for anything else). */
export function countsOf(metrics: unknown): ReadonlyMap<string, LimiterCounts> | undefined {
  return typeof metrics === 'object' && metrics !== null
    ? registries.get(metrics as SluiceMetrics)
    : undefined;
}

function resolveHotKeys(value: unknown): number {
  if (value === false) return 0;
  if (value === undefined) return DEFAULT_HOT_KEYS;
  if (typeof value !== 'object' || value === null || Object.keys(value).some((name) => name !== 'size'))
    throw new SluiceConfigError('hotKeys', value, 'expected { size?: number } or false');
  const { size = DEFAULT_HOT_KEYS } = value as { size?: unknown };
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_HOT_KEYS)
    throw new SluiceConfigError('hotKeys.size', size, `must be a whole number from 1 to ${MAX_HOT_KEYS}`);
  return size;
}
