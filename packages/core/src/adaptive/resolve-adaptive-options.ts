import { checkMetricsSink, type LimiterMetrics } from '../limiter/metrics-sink';
import { SluiceConfigError } from '../policy/config-error';
import { checkOptionNames, isPlainObject } from '../policy/option-checks';
import { ADAPTIVE_ALGORITHMS, type AdaptiveAlgorithmName } from './algorithms';
import type { AdaptiveLimiterOptions } from './adaptive-types';
import { eventLoopDelayMonitor, type EventLoopMonitor } from './event-loop-lag';

/** Every option `createAdaptiveLimiter` accepts, in the order errors list them. */
export const ADAPTIVE_OPTION_NAMES = [
  'algorithm',
  'initial',
  'min',
  'max',
  'shares',
  'queue',
  'eventLoop',
  'windowMs',
  'name',
  'metrics',
  'clock',
] as const satisfies ReadonlyArray<keyof AdaptiveLimiterOptions>;

/** The partition of names not in `shares`, and of `acquire()` without one. */
export const OTHER_PARTITION = '*';

/** Most names in `shares`: each is a metrics label value. */
const MAX_SHARES = 32;
const SHARE_NAME = /^[\x21-\x7e]{1,64}$/;
/** Rounding slack when shares such as 0.7 + 0.2 + 0.1 are summed. */
const SUM_SLACK = 1e-9;

/** The options, checked, with their defaults. */
export interface ResolvedAdaptiveOptions {
  readonly algorithm: AdaptiveAlgorithmName;
  readonly initial: number;
  readonly min: number;
  readonly max: number;
  /** Share by partition name, `'*'` last with what the others leave (possibly 0). */
  readonly shares: ReadonlyMap<string, number>;
  readonly queue:
    { readonly maxSize: number; readonly maxWaitMs: number; readonly targetMs: number } | undefined;
  readonly eventLoop: { readonly maxDelayMs: number; readonly monitor: EventLoopMonitor } | undefined;
  readonly windowMs: number;
  readonly name: string;
  readonly metrics: (() => LimiterMetrics) | undefined;
  readonly clock: () => number;
}

const NAMES = new Set<string>(ADAPTIVE_OPTION_NAMES);

/**
 * Checks `createAdaptiveLimiter`'s options once, at creation.
 * @throws {@link SluiceConfigError} naming the first invalid or unknown option
 */
export function resolveAdaptiveOptions(options: AdaptiveLimiterOptions = {}): ResolvedAdaptiveOptions {
  if (!isPlainObject(options)) {
    throw new SluiceConfigError(
      'options',
      options,
      'expected an object such as { shares: { checkout: 0.7 } }',
    );
  }
  checkOptionNames(options, NAMES);
  const algorithm: unknown = options.algorithm ?? 'vegas';
  if (!ADAPTIVE_ALGORITHMS.includes(algorithm as AdaptiveAlgorithmName)) {
    throw new SluiceConfigError('algorithm', algorithm, `must be one of ${ADAPTIVE_ALGORITHMS.join(', ')}`);
  }
  const min = whole('min', options.min, 1, 1_000_000, 1);
  const max = whole('max', options.max, min, 1_000_000, Math.max(min, 1000));
  const initial = whole('initial', options.initial, min, max, Math.min(max, Math.max(min, 20)));
  const name = options.name ?? 'adaptive';
  if (typeof name !== 'string' || !/^[\x20-\x7e]{1,128}$/.test(name)) {
    throw new SluiceConfigError(
      'name',
      name,
      "must be printable ASCII text of 1 to 128 characters (it labels the limiter's metrics)",
    );
  }
  const clock: unknown = options.clock ?? (() => performance.now());
  if (typeof clock !== 'function')
    throw new SluiceConfigError('clock', clock, 'must be a function returning ms');
  return {
    algorithm: algorithm as AdaptiveAlgorithmName,
    initial,
    min,
    max,
    shares: resolveShares(options.shares),
    queue: resolveQueue(options.queue),
    eventLoop: resolveEventLoop(options.eventLoop),
    windowMs: whole('windowMs', options.windowMs, 1, 60_000, 100),
    name,
    metrics: resolveMetrics(options.metrics, name),
    clock: clock as () => number,
  };
}

function whole(option: string, value: unknown, low: number, high: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < low || value > high) {
    throw new SluiceConfigError(option, value, `must be a whole number from ${low} to ${high}`);
  }
  return value;
}

function resolveShares(value: unknown): ReadonlyMap<string, number> {
  const shares = new Map<string, number>();
  if (value === undefined) return shares.set(OTHER_PARTITION, 1);
  if (!isPlainObject(value) || Object.keys(value).length === 0) {
    throw new SluiceConfigError(
      'shares',
      value,
      'expected an object of partition names to shares, such as { checkout: 0.7, browse: 0.3 }',
    );
  }
  const names = Object.keys(value);
  if (names.length > MAX_SHARES) {
    throw new SluiceConfigError(
      'shares',
      value,
      `at most ${MAX_SHARES} partitions (each is a metrics label)`,
    );
  }
  let sum = 0;
  for (const name of names) {
    const share = value[name];
    if (name === OTHER_PARTITION || !SHARE_NAME.test(name)) {
      throw new SluiceConfigError(
        `shares.${name}`,
        share,
        `a partition name must be 1 to 64 printable ASCII characters without spaces, and not "${OTHER_PARTITION}" (the partition of unlisted names)`,
      );
    }
    if (typeof share !== 'number' || !(share > 0 && share <= 1)) {
      throw new SluiceConfigError(
        `shares.${name}`,
        share,
        'a share must be a number above 0, at most 1 (a fraction of the limit)',
      );
    }
    sum += share;
    shares.set(name, share);
  }
  if (sum > 1 + SUM_SLACK) {
    throw new SluiceConfigError(
      'shares',
      value,
      `shares must sum to at most 1 (they sum to ${Number(sum.toFixed(6))})`,
    );
  }
  return shares.set(OTHER_PARTITION, Math.max(0, 1 - sum));
}

function resolveQueue(value: unknown): ResolvedAdaptiveOptions['queue'] {
  if (value === false) return undefined;
  if (value !== undefined && !isPlainObject(value)) {
    throw new SluiceConfigError(
      'queue',
      value,
      'expected false or an object such as { maxSize: 100, maxWaitMs: 50, targetMs: 5 }',
    );
  }
  const queue = value ?? {};
  checkOptionNames(queue, new Set(['maxSize', 'maxWaitMs', 'targetMs']), 'queue option');
  const maxWaitMs = whole('queue.maxWaitMs', queue.maxWaitMs, 1, 60_000, 50);
  return {
    maxSize: whole('queue.maxSize', queue.maxSize, 1, 1_000_000, 100),
    maxWaitMs,
    targetMs: whole('queue.targetMs', queue.targetMs, 1, maxWaitMs, Math.min(5, maxWaitMs)),
  };
}

function resolveEventLoop(value: unknown): ResolvedAdaptiveOptions['eventLoop'] {
  if (value === false) return undefined;
  if (value !== undefined && !isPlainObject(value)) {
    throw new SluiceConfigError(
      'eventLoop',
      value,
      'expected false or an object such as { maxDelayMs: 50, sampleMs: 100 }',
    );
  }
  const loop = value ?? {};
  checkOptionNames(loop, new Set(['maxDelayMs', 'sampleMs', 'monitor']), 'eventLoop option');
  const maxDelayMs = whole('eventLoop.maxDelayMs', loop.maxDelayMs, 1, 60_000, 50);
  const sampleMs = whole('eventLoop.sampleMs', loop.sampleMs, 10, 60_000, 100);
  const monitor = loop.monitor ?? eventLoopDelayMonitor(sampleMs);
  if (typeof monitor !== 'function') {
    throw new SluiceConfigError('eventLoop.monitor', monitor, 'must be a function (onSample) => stop');
  }
  return { maxDelayMs, monitor: monitor as EventLoopMonitor };
}

function resolveMetrics(metrics: unknown, name: string): ResolvedAdaptiveOptions['metrics'] {
  if (metrics === undefined) return undefined;
  checkMetricsSink(metrics);
  const info = { name, store: 'memory', remote: false, dryRun: false } as const;
  return () => metrics.limiter(info);
}
