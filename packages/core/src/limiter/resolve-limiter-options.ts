import { resolveBlock } from '../policy/block';
import { SluiceConfigError } from '../policy/config-error';
import { parseDuration } from '../policy/duration';
import {
  checkClock,
  checkOptionNames,
  clockReader,
  resolvePrefix,
  resolveTimeoutMs,
} from '../policy/option-checks';
import type { LimiterEmitter } from '../resilience/events';
import { checkDivisible, resolveOnStoreError, type ResolvedOnStoreError } from '../resilience/on-store-error';
import { resolveLease } from '../resilience/token-lease';
import { MemoryStore } from '../stores/memory-store';
import type { Store } from '../stores/store';
import type { BlockPolicy, Policy } from '../types';
import type { Target } from './decisions';
import { checkCost, OPTION_NAMES, resolveBlockCache, supportsRules } from './limiter-options';
import type { LimiterOptions, LimiterRulesOptions } from './limiter-types';
import { checkMetrics, type LimiterMetrics } from './metrics-sink';
import { createOverrides, type OverrideBase } from './overrides';
import { resolveRules } from './rules';

/** A limiter's options, every one validated and defaulted: what its paths are wired from. */
export interface ResolvedLimiterOptions {
  /** The limiter's own policies, in order (one per rate or rule). */
  readonly policies: readonly Policy[];
  /** The first of them: `limiter.policy`. */
  readonly policy: Policy;
  readonly store: Store;
  readonly prefix: string;
  /** The `clock` option: local epoch ms for tests; `undefined` for the store's own time. */
  readonly clock: (() => number) | undefined;
  /** The request's time to send the store: the clock's, checked, or `undefined` for the store's own. */
  readonly now: () => number | undefined;
  /** Units a request takes when `consume` is given no cost. */
  readonly defaultCost: number;
  readonly timeoutMs: number;
  /** Where the limiter reports (`metrics` option); `undefined` without one. */
  readonly metrics: LimiterMetrics | undefined;
  readonly onStoreError: ResolvedOnStoreError;
  /** `maxKeys` of the block cache; 0 without one. */
  readonly blockCacheKeys: number;
  /** The `block` option; `undefined` without one. */
  readonly block: BlockPolicy | undefined;
  /** `lease` as `[size, maxStaleMs]`; only ever set with a remote store. */
  readonly lease: readonly [number, number] | undefined;
  /** What a key without an override is limited by. */
  readonly own: Target;
  /** What a key is limited by: {@link own}, or its override's policies in their own namespace. */
  readonly targetOf: (key: string, context: unknown) => Target;
  /** Whether `overrides` was given: some key may then be limited by other policies than `own`. */
  readonly overridden: boolean;
}

/**
 * Validates and defaults every option of `createLimiter`, once, at creation. The options are
 * checked one after another in a fixed order, so of several invalid ones the same is always named.
 *
 * @param events - the limiter's emitter: an override found invalid at a request is reported on it
 * @throws {@link SluiceConfigError} naming the first invalid or unknown option
 */
export function resolveLimiterOptions(
  options: LimiterOptions | LimiterRulesOptions,
  events: LimiterEmitter,
): ResolvedLimiterOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SluiceConfigError('options', options, 'expected an object such as { rate: "10r/s" }');
  }
  checkOptionNames(options, OPTION_NAMES);
  const policies = resolveRules(options);
  const policy = policies[0] as Policy;
  const store = options.store ?? new MemoryStore();
  if (!isStore(store)) {
    throw new SluiceConfigError(
      'store',
      store,
      'expected a store such as new MemoryStore() or new RedisStore({ client })',
    );
  }
  const prefix = resolvePrefix(options.prefix);
  const clock = checkClock(options.clock);
  const defaultCost = checkCost('cost', options.cost ?? 1);
  const timeoutMs = resolveTimeoutMs(options.timeoutMs);
  const registerMetrics = checkMetrics(options, prefix, store);
  const onStoreError = resolveOnStoreError(options.onStoreError);
  checkDivisible(onStoreError, policies);
  const blockCacheKeys = resolveBlockCache(options.blockCache);
  const rulesSupported = supportsRules(
    store,
    onStoreError.mode === 'insurance' ? onStoreError.store : undefined,
  );
  if (policies.length > 1 && rulesSupported !== true) throw rulesSupported;
  // An override replaces the rate only: resolvePolicy reads the other options it knows.
  const first: OverrideBase = options.rules?.[0] ?? (options as LimiterOptions);
  const overrideOf =
    options.overrides === undefined
      ? undefined
      : createOverrides(options.overrides, {
          base: first,
          rulesSupported: rulesSupported === true,
          onError: (error, key, value) => {
            if (events.has('overrideError')) events.emit('overrideError', { error, key, value });
          },
        });
  const own: Target = { policies, scope: undefined };
  const targetOf = (key: string, context: unknown): Target =>
    overrideOf === undefined ? own : (overrideOf(key, context) ?? own);

  const now = clockReader(clock);

  const lease = resolveLimiterLease(options as LimiterOptions, store, policies);
  const block = resolveBlock(options.block);
  if (block !== undefined && lease !== undefined) {
    throw new SluiceConfigError(
      'lease',
      options.lease,
      'cannot be combined with block: leased units are spent on this instance, which would not see the key blocked',
    );
  }
  // Last, once every option has passed: a limiter whose creation fails never reaches the sink.
  const metrics: LimiterMetrics | undefined = registerMetrics?.();
  return Object.freeze({
    policies,
    policy,
    store,
    prefix,
    clock,
    now,
    defaultCost,
    timeoutMs,
    metrics,
    onStoreError,
    blockCacheKeys,
    block,
    lease,
    own,
    targetOf,
    overridden: overrideOf !== undefined,
  });
}

/** Whether `value` can be a limiter's store: it decides (`consume`) and forgets (`reset`). */
function isStore(value: unknown): value is Store {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Store).consume === 'function' &&
    typeof (value as Store).reset === 'function'
  );
}

/** `lease`, which only a remote store takes, and only with one rule; a bad value is named first. */
function resolveLimiterLease(
  { lease }: LimiterOptions,
  store: Store,
  policies: readonly Policy[],
): [number, number] | undefined {
  const resolved = resolveLease(lease, policies[0] as Policy, parseDuration);
  if (resolved === undefined) return undefined;
  if (store.consumeSync !== undefined) {
    throw new SluiceConfigError(
      'lease',
      lease,
      'is for a remote store (Redis): an in-process store decides without a round trip',
    );
  }
  if (policies.length > 1) throw new SluiceConfigError('lease', lease, 'takes one rule, not several');
  return resolved;
}
