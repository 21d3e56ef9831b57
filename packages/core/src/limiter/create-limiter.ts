import { SluiceConfigError } from '../policy/config-error';
import { LimiterEmitter } from '../resilience/events';
import { BlockCache, type Block } from '../resilience/block-cache';
import { resolveOnStoreError } from '../resilience/on-store-error';
import { guardStore, type GuardedVerdict } from '../resilience/store-guard';
import { leasing, resolveLease } from '../resilience/token-lease';
import { parseDuration } from '../policy/duration';
import { MemoryStore } from '../stores/memory-store';
import type { Store } from '../stores/store';
import type { Decision, DecisionLimit, Policy, Verdict } from '../types';
import { checkCost, OPTION_NAMES, resolveBlockCache, supportsRules } from './limiter-options';
import type { Limiter, LimiterOptions, LimiterRulesOptions } from './limiter-types';
import { cancelling } from './cancel';
import { createOverrides, type OverrideBase } from './overrides';
import { decidingRule, limitsOf, resolveRules } from './rules';

export type { ConsumeOptions, Limiter, LimiterOptions, LimiterRulesOptions } from './limiter-types';

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
    const decision = new LimiterDecision(v, key, decidedBy, limits);
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

  const cancel = cancelling({
    store,
    prefix,
    own: policies,
    now,
    timeoutMs: guard === undefined ? undefined : timeoutMs,
    forget: (key) => blocks?.forget(key),
  });

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
    cancel(decision, cancelOptions) {
      const cost = cancelOptions?.cost === undefined ? defaultCost : checkCost('cost', cancelOptions.cost);
      return cancel(decision, cost);
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
 * Every decision, built by one constructor: always the same fields, in the same order, so one
 * hidden class for every decision. A class rather than an object literal: V8 kept building
 * literal decisions with a hidden class it had replaced (once a number field held a double) and
 * migrated each one on first read, 3× slower decisions in one process out of two.
 */
class LimiterDecision implements Decision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
  readonly retryAfterMs: number;
  readonly delayMs: number;
  readonly reason: Decision['reason'];
  readonly key: string;
  readonly policy: Policy;
  readonly degraded: Decision['degraded'];
  readonly limits: readonly DecisionLimit[] | undefined;

  constructor(v: GuardedVerdict, key: string, policy: Policy, limits: readonly DecisionLimit[] | undefined) {
    this.allowed = v.allowed;
    this.limit = v.limit;
    this.remaining = v.remaining;
    this.resetMs = v.resetMs;
    this.retryAfterMs = v.retryAfterMs;
    this.delayMs = v.delayMs;
    this.reason = v.reason;
    this.key = key;
    this.policy = policy;
    this.degraded = v.degraded;
    this.limits = limits;
  }
}
