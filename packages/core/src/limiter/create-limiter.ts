import { SluiceConfigError } from '../policy/config-error';
import { MAX_LIMIT } from '../policy/rate';
import { resolvePolicy, type PolicyOptions } from '../policy/resolve-policy';
import { LimiterEmitter, type LimiterEventName, type LimiterListener } from '../resilience/events';
import { BlockCache } from '../resilience/block-cache';
import { resolveOnStoreError, type OnStoreError } from '../resilience/on-store-error';
import { guardStore, type GuardedVerdict } from '../resilience/store-guard';
import { MemoryStore } from '../stores/memory-store';
import type { Store } from '../stores/store';
import type { Decision, Policy } from '../types';

/** Options of {@link createLimiter}. */
export interface LimiterOptions extends PolicyOptions {
  /** Where state lives. @defaultValue a new `MemoryStore()` */
  store?: Store;
  /** Namespace of this limiter's keys in the store; give each limiter sharing a store its own. @defaultValue `'sluice'` */
  prefix?: string;
  /**
   * Current time in epoch ms. Tests inject one so they never sleep. Without it the memory store
   * reads `Date.now()` and the Redis store reads the Redis server's `TIME`.
   */
  clock?: () => number;
  /** Units a request takes when `consume` is given no cost. @defaultValue 1 */
  cost?: number;
  /**
   * What to do when a remote store (Redis) fails or is slower than `timeoutMs`. Not used with
   * in-process stores, which cannot be unavailable.
   * @defaultValue `{ insurance: new MemoryStore() }`: keep limiting on this instance alone
   */
  onStoreError?: OnStoreError;
  /**
   * A remote store slower than this counts as failed; the request is decided by `onStoreError`
   * instead of waiting, whatever the client's reconnect and offline-queue settings are. After
   * repeated failures the store is left alone for 250 ms, then probed by one request.
   * @defaultValue 50
   */
  timeoutMs?: number;
  /**
   * With a remote store: once the store says a key is limited until T, later requests for that
   * key on this instance are rejected locally until T, without a store call — a flood on one
   * hot key costs the store almost nothing. It never admits more than the store would. `false`
   * turns it off; `{ maxKeys }` bounds how many blocked keys are remembered.
   * @defaultValue `true` (`maxKeys` 10 000)
   */
  blockCache?: boolean | { maxKeys?: number };
}

/** Per-call options of {@link Limiter.consume}. */
export interface ConsumeOptions {
  /** Units this request takes: a whole number >= 0 (0 only looks). @defaultValue the limiter's `cost` option, 1 */
  cost?: number;
}

/** A limiter: one policy applied to any number of keys. */
export interface Limiter {
  /** The normalized policy. */
  readonly policy: Policy;
  /** The store in use. */
  readonly store: Store;
  /**
   * Takes `cost` units for `key` and resolves the decision. Being limited is a normal answer
   * (`allowed: false`); the promise rejects only when the store fails.
   * @throws {@link SluiceConfigError} (synchronously) when `key` is not a string, `cost` is invalid or `clock` returns no valid time
   */
  consume(key: string, options?: ConsumeOptions): Promise<Decision>;
  /**
   * {@link Limiter.consume} without a promise, when the store decides in-process (MemoryStore):
   * the fast path adapters take. Returns `undefined` when the store is remote (Redis): use
   * `consume` then.
   * @throws {@link SluiceConfigError} when `key` is not a string or `cost` is invalid
   */
  consumeSync(key: string, options?: ConsumeOptions): Decision | undefined;
  /** The decision a request of cost 0 would get: looks without taking anything. */
  peek(key: string): Promise<Decision>;
  /** Forgets `key`: its next request starts with the full limit. */
  reset(key: string): Promise<void>;
  /**
   * Listens to `limited`, `storeError`, `storeRecovered` or `fallback`. A listener that throws
   * never breaks a request.
   */
  on<E extends LimiterEventName>(event: E, listener: LimiterListener<E>): Limiter;
  /** Stops listening. */
  off<E extends LimiterEventName>(event: E, listener: LimiterListener<E>): Limiter;
}

const OPTION_NAMES = new Set([
  'rate',
  'burst',
  'algorithm',
  'nodelay',
  'delay',
  'store',
  'prefix',
  'clock',
  'cost',
  'onStoreError',
  'timeoutMs',
  'blockCache',
  'queue',
]);

/**
 * Creates a limiter from options validated once, here.
 *
 * @example
 * ```ts
 * import { createLimiter } from '@sluice/core';
 *
 * const limiter = createLimiter({ rate: '10r/s', burst: 20 });
 * const decision = await limiter.consume('user:42');
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`);
 * ```
 * @throws {@link SluiceConfigError} naming the first invalid or unknown option
 */
export function createLimiter(options: LimiterOptions): Limiter {
  if (typeof options !== 'object' || options === null) {
    throw new SluiceConfigError('options', options, 'expected an object such as { rate: "10r/s" }');
  }
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.has(name)) {
      throw new SluiceConfigError(
        name,
        (options as unknown as Record<string, unknown>)[name],
        `unknown option; accepted: ${[...OPTION_NAMES].join(', ')}`,
        'SLUICE_UNKNOWN_OPTION',
      );
    }
  }
  const policy = resolvePolicy(options);
  if (policy.maxWaitMs > 0 && options.store !== undefined && options.store.consumeSync === undefined) {
    // The Redis scripts do not queue yet: refuse rather than decide differently from memory.
    throw new SluiceConfigError('queue', options.queue, 'is available with the in-process MemoryStore only, for now');
  }
  const store = options.store ?? new MemoryStore();
  if (
    typeof store !== 'object' ||
    store === null ||
    typeof store.consume !== 'function' ||
    typeof store.reset !== 'function'
  ) {
    throw new SluiceConfigError(
      'store',
      store,
      'expected a store such as new MemoryStore() or new RedisStore({ client })',
    );
  }
  const prefix = options.prefix ?? 'sluice';
  if (typeof prefix !== 'string' || prefix.length === 0) {
    throw new SluiceConfigError('prefix', prefix, 'must be a non-empty string');
  }
  const { clock } = options;
  if (clock !== undefined && typeof clock !== 'function') {
    throw new SluiceConfigError('clock', clock, 'must be a function returning epoch milliseconds');
  }
  const defaultCost = checkCost('cost', options.cost ?? 1);
  const timeoutMs = options.timeoutMs ?? 50;
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) {
    throw new SluiceConfigError(
      'timeoutMs',
      timeoutMs,
      'must be a whole number of milliseconds from 1 to 60000',
    );
  }
  const onStoreError = resolveOnStoreError(options.onStoreError);
  const blockCacheKeys = resolveBlockCache(options.blockCache);
  const events = new LimiterEmitter();

  const now = (): number | undefined => {
    if (clock === undefined) return undefined;
    const ms = clock();
    if (!Number.isFinite(ms) || ms < 0)
      throw new SluiceConfigError('clock', ms, 'must return epoch milliseconds (a finite number >= 0)');
    return Math.floor(ms);
  };

  const decisionOf = (v: GuardedVerdict, key: string): Decision => {
    const decision: Decision = {
      allowed: v.allowed,
      limit: v.limit,
      remaining: v.remaining,
      resetMs: v.resetMs,
      retryAfterMs: v.retryAfterMs,
      delayMs: v.delayMs,
      // Always the same fields, in the same order: one hidden class for every decision.
      reason: v.reason,
      key,
      policy,
      degraded: v.degraded,
    };
    if (!decision.allowed && events.has('limited')) events.emit('limited', decision);
    if (decision.degraded !== undefined && events.has('fallback')) events.emit('fallback', decision);
    return decision;
  };
  // In-process stores answer synchronously and cannot be unavailable; remote ones are guarded.
  const consumeRemote =
    store.consumeSync === undefined
      ? guardStore({ store, policy, onStoreError, timeoutMs, events, now: clock ?? Date.now })
      : undefined;
  // The in-process path reuses one request object: consumeSync neither keeps it nor yields, so
  // a decision allocates nothing but the decision itself.
  const scratch: { prefix: string; key: string; policy: Policy; cost: number; nowMs: number | undefined } = {
    prefix,
    key: '',
    policy,
    cost: 0,
    nowMs: undefined,
  };
  const checkKey = (key: unknown): void => {
    if (typeof key !== 'string')
      throw new SluiceConfigError('key', key, 'must be a string', 'SLUICE_INVALID_ARGUMENT');
  };
  const decideSync = (key: string, cost: number): Decision => {
    scratch.key = key;
    scratch.cost = cost;
    scratch.nowMs = now();
    return decisionOf((store.consumeSync as NonNullable<Store['consumeSync']>)(scratch), key);
  };

  const blocks =
    consumeRemote !== undefined && blockCacheKeys > 0 ? new BlockCache(blockCacheKeys) : undefined;
  const localNow = clock ?? Date.now;
  const decideRemote = (
    remote: NonNullable<typeof consumeRemote>,
    key: string,
    cost: number,
  ): Promise<Decision> => {
    if (blocks === undefined) {
      return remote({ prefix, key, policy, cost, nowMs: now() }).then((verdict) => decisionOf(verdict, key));
    }
    const startedAt = localNow();
    const block = blocks.find(key, cost, startedAt);
    if (block !== undefined) {
      const retryAfterMs = block.until - startedAt;
      const resetMs = Math.max(retryAfterMs, block.resetAt - startedAt);
      return Promise.resolve(
        decisionOf(
          {
            allowed: false,
            limit: block.limit,
            remaining: 0,
            resetMs,
            retryAfterMs,
            delayMs: 0,
            reason: 'limited',
          },
          key,
        ),
      );
    }
    return remote({ prefix, key, policy, cost, nowMs: now() }).then((verdict) => {
      // Only the store's own answer is remembered, from the time the request left: T is never overstated.
      if (verdict.reason === 'limited' && verdict.degraded === undefined) {
        blocks.remember(key, cost, startedAt, verdict.limit, verdict.retryAfterMs, verdict.resetMs);
      }
      return decisionOf(verdict, key);
    });
  };

  // Not async: a bad key or clock is a programming error, thrown at the call, not a rejection.
  const decide = (key: string, cost: number): Promise<Decision> => {
    checkKey(key);
    if (consumeRemote === undefined) return Promise.resolve(decideSync(key, cost));
    return decideRemote(consumeRemote, key, cost);
  };

  const limiter: Limiter = {
    policy,
    store,
    consume(key, consumeOptions) {
      const cost = consumeOptions?.cost === undefined ? defaultCost : checkCost('cost', consumeOptions.cost);
      return decide(key, cost);
    },
    consumeSync(key, consumeOptions) {
      if (consumeRemote !== undefined) return undefined;
      const cost = consumeOptions?.cost === undefined ? defaultCost : checkCost('cost', consumeOptions.cost);
      checkKey(key);
      return decideSync(key, cost);
    },
    peek(key) {
      return decide(key, 0);
    },
    reset(key) {
      if (typeof key !== 'string')
        throw new SluiceConfigError('key', key, 'must be a string', 'SLUICE_INVALID_ARGUMENT');
      blocks?.forget(key);
      return store.reset({ prefix, key, policy, nowMs: now() });
    },
    on(event, listener) {
      events.on(event, listener);
      return limiter;
    },
    off(event, listener) {
      events.off(event, listener);
      return limiter;
    },
  };
  return limiter;
}

/** `blockCache` → how many blocked keys to remember (0: off). */
function resolveBlockCache(value: unknown): number {
  if (value === undefined || value === true) return 10_000;
  if (value === false) return 0;
  if (typeof value === 'object' && value !== null && Object.keys(value).every((name) => name === 'maxKeys')) {
    const { maxKeys = 10_000 } = value as { maxKeys?: unknown };
    if (typeof maxKeys === 'number' && Number.isInteger(maxKeys) && maxKeys >= 1) return maxKeys;
    throw new SluiceConfigError('blockCache.maxKeys', maxKeys, 'must be a whole number >= 1');
  }
  throw new SluiceConfigError('blockCache', value, 'expected true, false or { maxKeys: number }');
}

function checkCost(option: string, cost: unknown): number {
  if (typeof cost !== 'number' || !Number.isInteger(cost) || cost < 0 || cost > MAX_LIMIT) {
    throw new SluiceConfigError(
      option,
      cost,
      `must be a whole number from 0 to ${MAX_LIMIT}`,
      'SLUICE_INVALID_ARGUMENT',
    );
  }
  return cost;
}
