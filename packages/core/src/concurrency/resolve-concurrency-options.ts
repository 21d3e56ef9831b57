import { SluiceConfigError } from '../policy/config-error';
import { parseDuration } from '../policy/duration';
import { checkClock, checkOptionNames, resolvePrefix, resolveTimeoutMs } from '../policy/option-checks';
import { MAX_LIMIT } from '../policy/rate';
import { MAX_QUEUE_WAIT_MS } from '../policy/resolve-policy';
import { checkMetrics, type LimiterMetrics } from '../limiter/metrics-sink';
import { resolveOnStoreError, type ResolvedOnStoreError } from '../resilience/on-store-error';
import { MemoryStore } from '../stores/memory-store';
import type { PermitStore } from '../stores/permit-store';
import { MAX_LEASE_MS } from '../stores/redis/concurrency-scripts.lua';
import type { Store } from '../stores/store';
import type { ConcurrencyLimiterOptions } from './concurrency-types';

/** Every option name `createConcurrencyLimiter` accepts: any other is a `SluiceConfigError`. */
export const CONCURRENCY_OPTION_NAMES = [
  'max',
  'store',
  'prefix',
  'name',
  'metrics',
  'leaseMs',
  'queue',
  'onStoreError',
  'timeoutMs',
  'clock',
] as const satisfies ReadonlyArray<keyof ConcurrencyLimiterOptions>;

const NAMES = new Set<string>(CONCURRENCY_OPTION_NAMES);

/** Shortest `leaseMs`: a lease is renewed every third of it, and a round trip must fit. */
export const MIN_LEASE_MS = 100;
/** Default `leaseMs`: how long a crashed holder's permits stay taken. */
export const DEFAULT_LEASE_MS = 30_000;
/** Default `queue.maxSize`. */
export const DEFAULT_QUEUE_SIZE = 1000;

/** The options, validated, and where the permits live. */
export interface ResolvedConcurrencyOptions {
  readonly max: number;
  readonly prefix: string;
  readonly name: string;
  /** `undefined` without the `metrics` option. */
  readonly metrics: LimiterMetrics | undefined;
  readonly leaseMs: number;
  /** `undefined` without a queue. */
  readonly queue:
    { readonly maxWaitMs: number; readonly maxSize: number; readonly maxPerKey: number } | undefined;
  readonly timeoutMs: number;
  readonly clock: (() => number) | undefined;
  readonly onStoreError: ResolvedOnStoreError;
  /** The in-process store whose counts the permits share, or `undefined` for a shared store. */
  readonly local: Store | undefined;
  /** The shared store's permits, or `undefined` for an in-process store. */
  readonly remote: PermitStore | undefined;
}

/**
 * Validates `createConcurrencyLimiter`'s options once, at creation.
 * @throws {@link SluiceConfigError} naming the first invalid or unknown option
 */
export function resolveConcurrencyOptions(options: ConcurrencyLimiterOptions): ResolvedConcurrencyOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SluiceConfigError('options', options, 'expected an object such as { max: 10 }');
  }
  checkOptionNames(options, NAMES);
  const { max } = options;
  if (max === undefined) {
    throw new SluiceConfigError(
      'max',
      max,
      'is required: the requests allowed in flight at once per key',
      'SLUICE_MISSING_OPTION',
    );
  }
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > MAX_LIMIT) {
    throw new SluiceConfigError('max', max, `must be a whole number from 1 to ${MAX_LIMIT}`);
  }
  const prefix = resolvePrefix(options.prefix);
  const leaseMs =
    options.leaseMs === undefined ? DEFAULT_LEASE_MS : parseDuration('leaseMs', options.leaseMs);
  if (leaseMs < MIN_LEASE_MS || leaseMs > MAX_LEASE_MS) {
    throw new SluiceConfigError(
      'leaseMs',
      options.leaseMs,
      `must be from ${MIN_LEASE_MS} ms to 1 day (86400000 ms)`,
    );
  }
  const timeoutMs = resolveTimeoutMs(options.timeoutMs);
  const clock = checkClock(options.clock);
  const store: Store = options.store ?? new MemoryStore();
  const inProcess = typeof store === 'object' && store !== null && typeof store.consumeSync === 'function';
  if (!inProcess && (typeof store !== 'object' || store === null || typeof store.permits !== 'function')) {
    throw new SluiceConfigError(
      'store',
      store,
      'expected a store such as new MemoryStore() or new RedisStore({ client }) (a shared store needs permits())',
    );
  }
  // Checked as a rate limiter's `name` and `metrics`; a shared store's permit calls are reported
  // as a rate limiter's store calls are (duration, errors, health).
  const registerMetrics = checkMetrics(options, prefix, store);
  const queue = resolveQueue(options.queue);
  const onStoreError = resolveOnStoreError(options.onStoreError);
  // Last, once every option has passed: a limiter whose creation fails never reaches the sink.
  const metrics: LimiterMetrics | undefined = registerMetrics?.();
  return {
    max,
    prefix,
    name: options.name ?? prefix,
    metrics,
    leaseMs,
    queue,
    timeoutMs,
    clock,
    onStoreError,
    local: inProcess ? store : undefined,
    remote: inProcess ? undefined : (store.permits as () => PermitStore).call(store),
  };
}

function resolveQueue(queue: unknown): ResolvedConcurrencyOptions['queue'] {
  if (queue === undefined) return undefined;
  const accepted = 'expected { maxWaitMs: milliseconds or a duration, maxSize?: number, maxPerKey?: number }';
  if (typeof queue !== 'object' || queue === null || Array.isArray(queue)) {
    throw new SluiceConfigError('queue', queue, accepted);
  }
  for (const name of Object.keys(queue)) {
    if (name !== 'maxWaitMs' && name !== 'maxSize' && name !== 'maxPerKey')
      throw new SluiceConfigError(
        `queue.${name}`,
        (queue as Record<string, unknown>)[name],
        `unknown field; ${accepted}`,
      );
  }
  const {
    maxWaitMs,
    maxSize = DEFAULT_QUEUE_SIZE,
    maxPerKey = maxSize,
  } = queue as { maxWaitMs?: unknown; maxSize?: unknown; maxPerKey?: unknown };
  const waitMs = parseDuration('queue.maxWaitMs', maxWaitMs);
  if (waitMs > MAX_QUEUE_WAIT_MS) {
    throw new SluiceConfigError('queue.maxWaitMs', maxWaitMs, 'must be at most 10 minutes (600000 ms)');
  }
  if (typeof maxSize !== 'number' || !Number.isSafeInteger(maxSize) || maxSize < 1) {
    throw new SluiceConfigError('queue.maxSize', maxSize, 'must be a whole number >= 1');
  }
  if (
    typeof maxPerKey !== 'number' ||
    !Number.isSafeInteger(maxPerKey) ||
    maxPerKey < 1 ||
    maxPerKey > maxSize
  ) {
    throw new SluiceConfigError(
      'queue.maxPerKey',
      maxPerKey,
      `must be a whole number from 1 to queue.maxSize (${maxSize})`,
    );
  }
  return { maxWaitMs: waitMs, maxSize, maxPerKey };
}
