import { createHash } from 'node:crypto';
import { SluiceConfigError } from '../policy/config-error';
import { MemoryStore } from '../stores/memory-store';
import { RedisStore } from '../stores/redis/redis-store';
import type { Store } from '../stores/store';
import type { Decision } from '../types';
import type { ConcurrencyDecision, ConcurrencyStats } from '../concurrency/concurrency-decision';
import type { AdaptiveDecision, AdaptiveStats } from '../adaptive/adaptive-decision';

/** What a limiter tells its metrics about itself, once, when it is created. */
export interface LimiterInfo {
  /**
   * The `name` option (default: the `prefix`, made printable and at most 128 characters, a long
   * one ending with a digest of the whole): labels everything the limiter reports.
   */
  readonly name: string;
  /** The kind of store: `'memory'`, `'redis'`, or `'custom'` for any other. */
  readonly store: 'memory' | 'redis' | 'custom';
  /** Whether the store is remote (no `consumeSync`): only then are store calls, errors and health reported. */
  readonly remote: boolean;
  /** Whether the HTTP layer lets the limiter's rejections and delays through (`dryRun`). */
  readonly dryRun: boolean;
}

/**
 * What one limiter reports, as it happens. sluice calls these on its request path, so an
 * implementation should do no more than a few increments (read the values when scraped) and
 * must not throw. Store calls, errors and health are reported only for remote stores.
 */
export interface LimiterMetrics {
  /** A decision taken by `consume` (cost > 0; `peek` and cost 0 only look, and are not reported). */
  decided(decision: Decision): void;
  /** A store call that ended (answered, failed or timed out), in seconds. */
  storeCall(seconds: number): void;
  /** A store call failed: slower than `timeoutMs` (`'timeout'`), or any other failure (`'error'`). */
  storeError(kind: 'timeout' | 'error'): void;
  /**
   * The store answers again (`true`), or a circuit opened and requests stay away from the store
   * (`false`). On Redis Cluster each master has its own circuit: `false` when one opens, `true`
   * once none is open that requests still reach.
   */
  storeUp(up: boolean): void;
  /** A request refused by the block cache, without a store call. */
  blockCacheHit(): void;
  /** A store call made by `lease` (fetching units for this instance). */
  leaseCall(): void;
  /**
   * An admitted request's units given back after its response, because the response did not
   * count (the HTTP option `countWhen`: a success under `'failed'`). Optional: a sink without it
   * counts none.
   */
  refunded?(): void;
  /**
   * Concurrency limiters: each answer of `acquire` (admitted, admitted after waiting in the
   * queue, or refused). Optional: a sink without it counts no concurrency decisions.
   */
  acquired?(decision: ConcurrencyDecision): void;
  /**
   * Concurrency limiters: called once, at creation, with the limiter, whose `stats()` (permits
   * held and requests queued in this process) a sink reads when scraped. A sink should hold it
   * weakly (`WeakRef`), so that reporting does not keep a dropped limiter alive. Optional.
   */
  watch?(limiter: { stats(): ConcurrencyStats }): void;
  /**
   * Adaptive limiters: each answer of `acquire` (admitted, or refused: `shed`). Optional.
   */
  adaptiveDecided?(decision: AdaptiveDecision): void;
  /**
   * Adaptive limiters: called once, at creation, with the limiter, whose `stats()` (the limit,
   * and in flight, queued and shed by partition) a sink reads when scraped; held weakly, as
   * {@link LimiterMetrics.watch}. Optional.
   */
  watchAdaptive?(limiter: { stats(): AdaptiveStats }): void;
}

/**
 * The `metrics` option of a limiter: `prometheus()` from `@sluice/metrics`, or your own. Each
 * limiter calls {@link MetricsSink.limiter} once, at creation; limiters with the same `name`
 * may get the same {@link LimiterMetrics} (the sink decides: `@sluice/metrics` shares them).
 */
export interface MetricsSink {
  limiter(info: LimiterInfo): LimiterMetrics;
}

/** Printable ASCII, as a Prometheus label value and a dashboard title can always show. */
const PRINTABLE = /^[\x20-\x7e]+$/;
const MAX_NAME_LENGTH = 128;

/**
 * Checks a limiter's `name` and `metrics` options, and returns how to register it with the sink
 * (`undefined` without `metrics`, so a limiter without them pays one `undefined` check per
 * decision). Registering is left to the caller, once every other option has passed: a limiter
 * whose creation fails never reaches the sink.
 *
 * @throws {@link SluiceConfigError} naming `name` (not printable ASCII, or longer than 128) or `metrics`
 */
export function checkMetrics(
  options: { readonly name?: unknown; readonly metrics?: unknown },
  prefix: string,
  store: Store,
): (() => LimiterMetrics) | undefined {
  const { name, metrics } = options;
  if (
    name !== undefined &&
    (typeof name !== 'string' || !PRINTABLE.test(name) || name.length > MAX_NAME_LENGTH)
  ) {
    throw new SluiceConfigError(
      'name',
      name,
      `must be printable ASCII text of 1 to ${MAX_NAME_LENGTH} characters (it labels the limiter's metrics)`,
    );
  }
  if (metrics === undefined) return undefined;
  checkMetricsSink(metrics);
  const info: LimiterInfo = {
    name: name ?? printableName(prefix),
    store: store instanceof MemoryStore ? 'memory' : store instanceof RedisStore ? 'redis' : 'custom',
    remote: store.consumeSync === undefined,
    dryRun: false,
  };
  return () => metrics.limiter(info);
}

/**
 * `metrics` is a sink (an object with `limiter()`), or a `SluiceConfigError` names it.
 *
 * @throws {@link SluiceConfigError} naming `metrics`
 */
export function checkMetricsSink(metrics: unknown): asserts metrics is MetricsSink {
  if (
    typeof metrics !== 'object' ||
    metrics === null ||
    typeof (metrics as MetricsSink).limiter !== 'function'
  ) {
    throw new SluiceConfigError(
      'metrics',
      metrics,
      "expected a metrics sink such as prometheus() from '@sluice/metrics'",
    );
  }
}

/**
 * What is escaped in a default name: any UTF-16 code unit outside printable ASCII, and a
 * backslash that, with what follows it, reads as an escape (`\\u` and four hex digits).
 */
const TO_ESCAPE = /[^\x20-\x7e]|\\(?=u[0-9a-fA-F]{4})/g;
/** How a name past the bound ends: `...#` and 64 bits of the SHA-256 of the whole escaped name. */
const DIGEST_HEX = 16;
const DIGESTED = /\.\.\.#[0-9a-f]{16}$/;

/**
 * The default name, from a prefix that may hold any text. What is not printable ASCII is
 * `\\uXXXX`-escaped (per UTF-16 code unit), and so is a backslash starting text that would read
 * as an escape, so that each `\\uXXXX` of a name stands for one code unit and nothing else:
 * distinct prefixes get distinct names. Every other printable name is kept as it is.
 *
 * Past 128 characters, a name keeps its first 108 and ends with `...#` and a digest of the
 * whole escaped name: two long routes sharing their first 128 characters still get two names.
 * A printable name of exactly 128 characters that ends like a digest is digested too, so it
 * cannot be taken for another's. ASCII `...` (not `…`): names stay printable ASCII, as a `name`
 * given by hand must be. Called once per limiter, at creation.
 */
function printableName(prefix: string): string {
  const escaped = prefix.replace(TO_ESCAPE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (escaped.length < MAX_NAME_LENGTH || (escaped.length === MAX_NAME_LENGTH && !DIGESTED.test(escaped)))
    return escaped;
  // The escaped name is ASCII, one-to-one with the prefix: hashing it hashes the prefix exactly.
  const digest = createHash('sha256').update(escaped).digest('hex').slice(0, DIGEST_HEX);
  return `${escaped.slice(0, MAX_NAME_LENGTH - DIGEST_HEX - 4)}...#${digest}`;
}

/**
 * The same sink, telling each limiter it is in `dryRun` (the HTTP layer wraps its `metrics`
 * with it): its rejections and delays were let through. Anything that is not a sink is
 * returned as it is, for `createLimiter` to refuse by name.
 */
export function dryRunMetrics(metrics: unknown): unknown {
  if (
    typeof metrics !== 'object' ||
    metrics === null ||
    typeof (metrics as MetricsSink).limiter !== 'function'
  )
    return metrics;
  const sink = metrics as MetricsSink;
  return { limiter: (info: LimiterInfo) => sink.limiter({ ...info, dryRun: true }) } satisfies MetricsSink;
}

/** Reports a decision when it took something (cost > 0); returns it. */
export function reported(metrics: LimiterMetrics | undefined, decision: Decision, cost: number): Decision {
  if (metrics !== undefined && cost > 0) metrics.decided(decision);
  return decision;
}
