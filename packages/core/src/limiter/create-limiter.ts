import { SluiceConfigError } from '../policy/config-error';
import { MAX_LIMIT, type RateInput } from '../policy/rate';
import type { PolicyOptions } from '../policy/resolve-policy';
import { LimiterEmitter, type LimiterEventName, type LimiterListener } from '../resilience/events';
import { BlockCache, type Block } from '../resilience/block-cache';
import { resolveOnStoreError, type OnStoreError } from '../resilience/on-store-error';
import { guardStore, type GuardedVerdict } from '../resilience/store-guard';
import { leasing, resolveLease, type LeaseOption } from '../resilience/token-lease';
import { parseDuration } from '../policy/duration';
import { MemoryStore } from '../stores/memory-store';
import type { Store } from '../stores/store';
import type { Decision, DecisionLimit, Policy, Verdict } from '../types';
import { createOverrides, type OverrideBase, type Overrides } from './overrides';
import { decidingRule, limitsOf, resolveRules, type RuleOptions } from './rules';

/** Options of {@link createLimiter}. */
export interface LimiterOptions extends Omit<PolicyOptions, 'rate'> {
  /**
   * Sustained rate: `'10r/s'`, `'6r/m'`, `'100/1m'` or `{ limit, window }` — or a list of them,
   * several limits that must all admit a request (`['10r/s', '1000/1h']`, at most 16), sharing
   * `algorithm`, `burst`, `nodelay` and `delay` (each with its own default burst). A request
   * rejected by any consumes from none, atomically (one Lua call on Redis, one step in memory).
   * Required (or `rules`: see {@link LimiterRulesOptions}).
   */
  rate: RateInput | readonly RateInput[];
  /** See {@link LimiterRulesOptions}. */
  rules?: undefined;
  /**
   * Per-key limits: `{ 'sku:1001': '10r/s' }` (an object or `Map` from key to a rate or a list of
   * rates, read on every request, so a change takes effect on the key's next request), or a
   * function `(key, context?) => rate | undefined` (`context` is what `consume` was given, e.g.
   * the request from the HTTP layer). An override replaces the rate only: `algorithm`, `burst`,
   * `nodelay` and `delay` are the limiter's (with `rules`, the first rule's). An overridden key
   * has its own state per override rate (Redis: `…:{<key>}:<algorithm>:<rate>`), so changing its
   * override starts it fresh. An invalid value found at a request leaves that key on the
   * limiter's own rate and is reported once through the `overrideError` event; at creation it throws.
   * @defaultValue none
   */
  overrides?: Overrides;
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
  /**
   * With a remote store, for hot keys: take `size` units per store call and spend them on this
   * instance for up to `maxStaleMs` (see `leasing`). Never admits more than the shared limit;
   * unspent units are dropped. One rule only; not with the leaky bucket, `queue` or `warmup`.
   * @defaultValue none
   */
  lease?: LeaseOption;
}

/**
 * {@link LimiterOptions} with several limits of their own algorithms instead of `rate`:
 * `rules: [{ rate, algorithm?, burst?, nodelay?, delay?, queue? }, …]` (at most 16), all or
 * nothing as a list in `rate`. Not with a top-level `rate`, `algorithm`, `burst`, `nodelay`,
 * `delay` or `queue`. The store must have `consumeRules` (MemoryStore and RedisStore do).
 *
 * @example
 * ```ts
 * createLimiter({ rules: [{ rate: '10r/s', algorithm: 'leaky-bucket', burst: 20 }, { rate: '1000/1d', algorithm: 'fixed-window' }] });
 * ```
 */
export interface LimiterRulesOptions extends Omit<
  LimiterOptions,
  'rate' | 'rules' | 'algorithm' | 'burst' | 'nodelay' | 'delay' | 'queue'
> {
  /** The limits, in order: every one must admit a request, and a rejection consumes from none. */
  rules: readonly RuleOptions[];
  rate?: undefined;
}

/** Per-call options of {@link Limiter.consume}. */
export interface ConsumeOptions {
  /** Units this request takes: a whole number >= 0 (0 only looks). @defaultValue the limiter's `cost` option, 1 */
  cost?: number;
  /** Passed to an `overrides` function as its second argument (the HTTP layer passes the request). */
  context?: unknown;
}

/** A limiter: one policy applied to any number of keys. */
export interface Limiter {
  /** The normalized policy (with several rules, the first one's). */
  readonly policy: Policy;
  /** Every rule's normalized policy, in order: one unless `rate` is a list or `rules` is given. */
  readonly policies: readonly Policy[];
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
  'rules',
  'overrides',
  'warmup',
  'lease',
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
export function createLimiter(options: LimiterOptions | LimiterRulesOptions): Limiter {
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
  const policies = resolveRules(options);
  const policy = policies[0] as Policy;
  if (options.store !== undefined && options.store.consumeSync === undefined) {
    // The Redis scripts neither queue nor warm up yet: refuse rather than decide differently from memory.
    for (const [option, used] of [
      ['queue', policies.some((p) => p.maxWaitMs > 0)],
      ['warmup', policies.some((p) => p.warmupMs > 0)],
    ] as const) {
      if (used) {
        const value = (options as unknown as Record<string, unknown>)[option];
        throw new SluiceConfigError(
          option,
          value,
          'is available with the in-process MemoryStore only, for now',
        );
      }
    }
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
  const rulesSupported = supportsRules(
    store,
    onStoreError.mode === 'insurance' ? onStoreError.store : undefined,
  );
  if (policies.length > 1 && rulesSupported !== true) throw rulesSupported;
  // What an overridden key shares with the limiter: everything but the rate.
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
  /** What a key is limited by: the limiter's own policies, or its override's, in their own namespace. */
  const own: Target = { policies, scope: undefined };
  const targetOf = (key: string, context: unknown): Target =>
    overrideOf === undefined ? own : (overrideOf(key, context) ?? own);

  const now = (): number | undefined => {
    if (clock === undefined) return undefined;
    const ms = clock();
    if (!Number.isFinite(ms) || ms < 0)
      throw new SluiceConfigError('clock', ms, 'must return epoch milliseconds (a finite number >= 0)');
    return Math.floor(ms);
  };

  const decisionOf = (
    v: GuardedVerdict,
    key: string,
    decidedBy: Policy,
    limits: readonly DecisionLimit[] | undefined,
  ): Decision => {
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
      policy: decidedBy,
      degraded: v.degraded,
      limits,
    };
    if (!decision.allowed && events.has('limited')) events.emit('limited', decision);
    if (decision.degraded !== undefined && events.has('fallback')) events.emit('fallback', decision);
    return decision;
  };
  /** Several rules: the deciding rule's numbers, the longest delay, and every rule's numbers. */
  const rulesDecisionOf = (
    verdicts: readonly Verdict[],
    target: Target,
    key: string,
    degraded: GuardedVerdict['degraded'],
  ): Decision => {
    const { index, delayMs } = decidingRule(verdicts);
    const v = verdicts[index] as Verdict;
    // Field by field, not a spread: spreading a verdict and overriding delayMs leaves V8 a slow
    // object (measured: 4× slower decisions with several rules).
    return decisionOf(
      {
        allowed: v.allowed,
        limit: v.limit,
        remaining: v.remaining,
        resetMs: v.resetMs,
        retryAfterMs: v.retryAfterMs,
        delayMs,
        reason: v.reason,
        degraded,
      },
      key,
      target.policies[index] as Policy,
      limitsOf(target.policies, verdicts),
    );
  };
  // In-process stores answer synchronously and cannot be unavailable; remote ones are guarded.
  const guard =
    store.consumeSync === undefined
      ? guardStore({ store, onStoreError, timeoutMs, events, now: clock ?? Date.now })
      : undefined;
  // The in-process path reuses one request object: consumeSync neither keeps it nor yields, so
  // a decision allocates nothing but the decision itself.
  const scratch: {
    prefix: string;
    key: string;
    policy: Policy;
    cost: number;
    nowMs: number | undefined;
    scope: string | undefined;
  } = { prefix, key: '', policy, cost: 0, nowMs: undefined, scope: undefined };
  const checkKey = (key: unknown): void => {
    if (typeof key !== 'string')
      throw new SluiceConfigError('key', key, 'must be a string', 'SLUICE_INVALID_ARGUMENT');
  };
  // One policy and no overrides: the target is always the limiter's own, and the scratch request
  // already holds its policy, so the hot in-process path does no more than it did before rules.
  const plain = overrideOf === undefined && policies.length === 1;
  const decidePlainSync = (key: string, cost: number): Decision => {
    scratch.key = key;
    scratch.cost = cost;
    scratch.nowMs = now();
    return decisionOf(
      (store.consumeSync as NonNullable<Store['consumeSync']>)(scratch),
      key,
      policy,
      undefined,
    );
  };
  const decideSync = (key: string, cost: number, target: Target): Decision => {
    if (target.policies.length > 1) {
      const request = { prefix, key, policies: target.policies, cost, nowMs: now(), scope: target.scope };
      const verdicts = (store.consumeRulesSync as NonNullable<Store['consumeRulesSync']>)(request);
      return rulesDecisionOf(verdicts, target, key, undefined);
    }
    scratch.key = key;
    scratch.cost = cost;
    scratch.nowMs = now();
    scratch.policy = target.policies[0] as Policy;
    scratch.scope = target.scope;
    return decisionOf(
      (store.consumeSync as NonNullable<Store['consumeSync']>)(scratch),
      key,
      scratch.policy,
      undefined,
    );
  };

  const blocks = guard !== undefined && blockCacheKeys > 0 ? new BlockCache(blockCacheKeys) : undefined;
  const localNow = clock ?? Date.now;
  const lease = resolveLease((options as LimiterOptions).lease, policy, parseDuration);
  if (lease !== undefined && (guard === undefined || policies.length > 1)) {
    throw new SluiceConfigError(
      'lease',
      (options as LimiterOptions).lease,
      guard === undefined
        ? 'is for a remote store (Redis): an in-process store decides without a round trip'
        : 'takes one rule, not several',
    );
  }
  const consumeOne =
    guard === undefined
      ? undefined
      : lease === undefined
        ? (request: Parameters<typeof guard.consume>[0]) => guard.consume(request)
        : leasing((request) => guard.consume(request), lease[0], lease[1], localNow);
  const blockedDecision = (block: Block, key: string, at: number): Decision => {
    const retryAfterMs = block.until - at;
    const resetMs = Math.max(retryAfterMs, block.resetAt - at);
    return decisionOf(
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
      block.policy,
      block.limits,
    );
  };
  const decideRemote = (
    remote: NonNullable<typeof guard>,
    key: string,
    cost: number,
    target: Target,
  ): Promise<Decision> => {
    const startedAt = blocks === undefined ? 0 : localNow();
    if (blocks !== undefined) {
      const block = blocks.find(key, cost, startedAt, target.policies);
      if (block !== undefined) return Promise.resolve(blockedDecision(block, key, startedAt));
    }
    // Only the store's own answer is remembered, from the time the request left: T is never overstated.
    const remembered = (decision: Decision): Decision => {
      if (blocks !== undefined && decision.reason === 'limited' && decision.degraded === undefined)
        blocks.remember(key, cost, startedAt, decision, target.policies);
      return decision;
    };
    const { scope } = target;
    if (target.policies.length > 1) {
      return remote
        .consumeRules({ prefix, key, policies: target.policies, cost, nowMs: now(), scope })
        .then(({ verdicts, degraded }) => remembered(rulesDecisionOf(verdicts, target, key, degraded)));
    }
    const decidedBy = target.policies[0] as Policy;
    return (consumeOne as NonNullable<typeof consumeOne>)({
      prefix,
      key,
      policy: decidedBy,
      cost,
      nowMs: now(),
      scope,
    }).then((verdict) => remembered(decisionOf(verdict, key, decidedBy, undefined)));
  };

  // Not async: a bad key or clock is a programming error, thrown at the call, not a rejection.
  const decide = (key: string, cost: number, context: unknown): Promise<Decision> => {
    checkKey(key);
    if (guard === undefined)
      return Promise.resolve(
        plain ? decidePlainSync(key, cost) : decideSync(key, cost, targetOf(key, context)),
      );
    return decideRemote(guard, key, cost, targetOf(key, context));
  };
  const resetTarget = (key: string, { policies: rules, scope }: Target): Promise<void> =>
    rules.length > 1
      ? (store.resetRules as NonNullable<Store['resetRules']>)({
          prefix,
          key,
          policies: rules,
          nowMs: now(),
          scope,
        })
      : store.reset({ prefix, key, policy: rules[0] as Policy, nowMs: now(), scope });

  const limiter: Limiter = {
    policy,
    policies,
    store,
    consume(key, consumeOptions) {
      const cost = consumeOptions?.cost === undefined ? defaultCost : checkCost('cost', consumeOptions.cost);
      return decide(key, cost, consumeOptions?.context);
    },
    consumeSync(key, consumeOptions) {
      if (guard !== undefined) return undefined;
      const cost = consumeOptions?.cost === undefined ? defaultCost : checkCost('cost', consumeOptions.cost);
      checkKey(key);
      return plain
        ? decidePlainSync(key, cost)
        : decideSync(key, cost, targetOf(key, consumeOptions?.context));
    },
    peek(key) {
      return decide(key, 0, undefined);
    },
    reset(key) {
      if (typeof key !== 'string')
        throw new SluiceConfigError('key', key, 'must be a string', 'SLUICE_INVALID_ARGUMENT');
      blocks?.forget(key);
      // An overridden key forgets both: its override's state and its state under the limiter's own.
      const target = targetOf(key, undefined);
      if (target === own) return resetTarget(key, own);
      return Promise.all([resetTarget(key, own), resetTarget(key, target)]).then(() => undefined);
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

/** What a key is limited by: one policy or several, and the namespace of its state. */
interface Target {
  readonly policies: readonly Policy[];
  /** `undefined` for the limiter's own policies; an override's rates otherwise. */
  readonly scope: string | undefined;
}

/**
 * `true` when the store (and the insurance store, for a remote one) can decide several rules at
 * once; else the error to throw when several are configured.
 */
function supportsRules(store: Store, insurance: Store | undefined): true | SluiceConfigError {
  const inProcess = store.consumeSync !== undefined;
  const decides = inProcess
    ? typeof store.consumeRulesSync === 'function'
    : typeof store.consumeRules === 'function';
  if (!decides || typeof store.resetRules !== 'function') {
    return new SluiceConfigError(
      'store',
      store,
      `several limits need a store with ${inProcess ? 'consumeRulesSync' : 'consumeRules'} and resetRules, as MemoryStore and RedisStore have`,
    );
  }
  if (!inProcess && insurance !== undefined && typeof insurance.consumeRules !== 'function') {
    return new SluiceConfigError(
      'onStoreError.insurance',
      insurance,
      'several limits need an insurance store with consumeRules, as MemoryStore has',
    );
  }
  return true;
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
