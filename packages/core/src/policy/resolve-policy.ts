import { ALGORITHMS, type AlgorithmName, type Policy } from '../types';
import { SluiceConfigError } from './config-error';
import { parseDuration } from './duration';
import { MAX_LIMIT, parseRate, type RateInput } from './rate';

/** The options that shape a policy (a subset of the limiter options). */
export interface PolicyOptions {
  /** Sustained rate: `'10r/s'`, `'6r/m'`, `'100/1m'` or `{ limit, window }`. Required. */
  rate: RateInput;
  /**
   * Extra requests allowed at once (nginx `burst`, redis-cell `max_burst`); capacity is `burst + 1`.
   * @defaultValue 0 for nginx rates (`'10r/s'`), `limit - 1` for a count per window (`'100/1m'`)
   */
  burst?: number;
  /** @defaultValue `'gcra'` */
  algorithm?: AlgorithmName;
  /** `leaky-bucket` only: pass the burst at once instead of delaying it (nginx `nodelay`). @defaultValue false */
  nodelay?: boolean;
  /** `leaky-bucket` only: the first N excess requests pass at once, later ones are delayed (nginx `delay=N`). @defaultValue 0 */
  delay?: number;
  /**
   * `gcra` and `token-bucket`: queue instead of rejecting. A request that cannot pass now is
   * admitted with `delayMs` when it can pass within `maxWaitMs`, its turn reserved, so requests
   * are spaced evenly at the rate; later ones are rejected. (The leaky bucket queues with
   * `burst` and no `nodelay`, as nginx.) The adapters hold a queued request for its delay.
   * @defaultValue none: reject at once
   */
  queue?: { maxWaitMs: number | string };
  /**
   * `gcra` and `token-bucket`: warm-up (Guava SmoothWarmingUp / Sentinel warm-up). A cold key
   * — new, or idle — starts at a third of its rate and reaches the full rate over this period of
   * use, so a backend is not hit at full rate the second a sale opens. No burst: requests are
   * spaced at the current rate (with `queue`, held until their turn). Duration: ms or `'30s'`.
   * @defaultValue none
   */
  warmup?: number | string;
}

/** Largest sliding-log limit: the log keeps one entry per admitted unit, per key. */
export const MAX_SLIDING_LOG_LIMIT = 100_000;

/**
 * Validates the policy options and normalizes them into a {@link Policy} of integers.
 * @throws {@link SluiceConfigError} naming the first invalid option
 */
export function resolvePolicy(options: PolicyOptions): Policy {
  const algorithm = options.algorithm ?? 'gcra';
  if (!(ALGORITHMS as readonly unknown[]).includes(algorithm)) {
    throw new SluiceConfigError(
      'algorithm',
      algorithm,
      `expected one of ${ALGORITHMS.map((a) => `'${a}'`).join(', ')}`,
    );
  }
  if (options.rate === undefined) {
    throw new SluiceConfigError(
      'rate',
      undefined,
      'is required, e.g. "10r/s", "100/1m" or { limit: 100, window: "1m" }',
      'SLUICE_MISSING_OPTION',
    );
  }
  const rate = parseRate('rate', options.rate);
  const burst = options.burst ?? rate.defaultBurst;
  if (typeof burst !== 'number' || !Number.isInteger(burst) || burst < 0 || burst > MAX_LIMIT) {
    throw new SluiceConfigError('burst', burst, `must be a whole number from 0 to ${MAX_LIMIT}`);
  }
  if (options.nodelay !== undefined && typeof options.nodelay !== 'boolean') {
    throw new SluiceConfigError('nodelay', options.nodelay, 'must be true or false');
  }
  const delay = options.delay ?? 0;
  if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > MAX_LIMIT) {
    throw new SluiceConfigError('delay', options.delay, `must be a whole number from 0 to ${MAX_LIMIT}`);
  }
  if (algorithm !== 'leaky-bucket') {
    for (const name of ['nodelay', 'delay'] as const) {
      if (options[name] !== undefined) {
        throw new SluiceConfigError(
          name,
          options[name],
          `only applies to algorithm 'leaky-bucket' (got '${algorithm}')`,
        );
      }
    }
  }
  if (options.nodelay === true && options.delay !== undefined) {
    throw new SluiceConfigError(
      'delay',
      options.delay,
      'cannot be combined with nodelay: true (nodelay passes the whole burst at once)',
    );
  }
  const maxWaitMs = resolveQueue(options.queue, algorithm);
  const warmupMs = resolveWarmup(options, algorithm);
  const policy: Policy = {
    algorithm,
    limit: rate.limit,
    windowMs: rate.windowMs,
    burst,
    nodelay: options.nodelay ?? false,
    delay,
    maxWaitMs,
    warmupMs,
    source: rate.source,
  };
  checkMagnitudes(policy, options.burst !== undefined);
  return policy;
}

/**
 * Requests allowed at once: `burst + 1` for the bucket algorithms, `limit` for the window ones,
 * and 1 with `warmup` (Guava's warming limiter spaces every request; it has no burst).
 */
export function capacityOf(policy: Policy): number {
  if (policy.warmupMs > 0) return 1;
  return policy.algorithm === 'gcra' ||
    policy.algorithm === 'token-bucket' ||
    policy.algorithm === 'leaky-bucket'
    ? policy.burst + 1
    : policy.limit;
}

/** Longest wait a queue accepts: 10 minutes (a request held longer is better rejected). */
export const MAX_QUEUE_WAIT_MS = 600_000;

function resolveQueue(queue: unknown, algorithm: Policy['algorithm']): number {
  if (queue === undefined) return 0;
  if (algorithm !== 'gcra' && algorithm !== 'token-bucket') {
    throw new SluiceConfigError(
      'queue',
      queue,
      algorithm === 'leaky-bucket'
        ? "not for 'leaky-bucket', which queues with burst (without nodelay), as nginx"
        : `applies to algorithm 'gcra' or 'token-bucket' (got '${algorithm}')`,
    );
  }
  if (
    typeof queue !== 'object' ||
    queue === null ||
    Object.keys(queue).some((name) => name !== 'maxWaitMs')
  ) {
    throw new SluiceConfigError(
      'queue',
      queue,
      'expected { maxWaitMs: milliseconds or a duration like "1s" }',
    );
  }
  const maxWaitMs = parseDuration('queue.maxWaitMs', (queue as { maxWaitMs?: unknown }).maxWaitMs);
  if (maxWaitMs > MAX_QUEUE_WAIT_MS) {
    throw new SluiceConfigError('queue.maxWaitMs', maxWaitMs, 'must be at most 600000 ms (10 minutes)');
  }
  return maxWaitMs;
}

function resolveWarmup(options: PolicyOptions, algorithm: Policy['algorithm']): number {
  if (options.warmup === undefined) return 0;
  if (algorithm !== 'gcra' && algorithm !== 'token-bucket') {
    throw new SluiceConfigError(
      'warmup',
      options.warmup,
      `applies to algorithm 'gcra' or 'token-bucket' (got '${algorithm}')`,
    );
  }
  if (options.burst !== undefined) {
    throw new SluiceConfigError(
      'burst',
      options.burst,
      'cannot be combined with warmup: a warming limiter has no burst (as Guava)',
    );
  }
  return parseDuration('warmup', options.warmup);
}

/**
 * Keeps every integer an algorithm computes below 2^53, where doubles (JS and Lua) are exact.
 * @param burstGiven - whether the user gave the burst (else it is the rate's default, and the
 *   error names the rate)
 */
export function checkMagnitudes(policy: Policy, burstGiven = true): void {
  const { algorithm, limit, windowMs, burst } = policy;
  const safe = Number.MAX_SAFE_INTEGER;
  if (algorithm === 'gcra' || algorithm === 'token-bucket' || algorithm === 'leaky-bucket') {
    const scale = algorithm === 'leaky-bucket' ? 1000 : 1;
    if ((burst + 2) * windowMs * scale + policy.maxWaitMs * policy.limit > safe) {
      const bound = `(burst + 2) × window${scale > 1 ? ' × 1000' : ''} must stay below 2^53`;
      // A burst the user did not give is the rate's default (limit - 1): the rate is too large.
      if (!burstGiven) {
        throw new SluiceConfigError(
          'rate',
          policy.source,
          `too large: its default burst (${burst}, the limit - 1) with a window of ${windowMs} ms overflows (${bound}); give a smaller burst`,
        );
      }
      throw new SluiceConfigError('burst', burst, `too large for a window of ${windowMs} ms: ${bound}`);
    }
  } else if (algorithm === 'sliding-window' && 2 * limit * windowMs > safe) {
    throw new SluiceConfigError(
      'rate',
      policy.source,
      'too large: 2 × limit × window (ms) must stay below 2^53',
    );
  } else if (algorithm === 'sliding-log' && limit > MAX_SLIDING_LOG_LIMIT) {
    throw new SluiceConfigError(
      'rate',
      policy.source,
      `sliding-log keeps one entry per request: its limit must be at most ${MAX_SLIDING_LOG_LIMIT}; use 'sliding-window' for larger limits`,
    );
  }
}
