import { SluiceConfigError } from '../policy/config-error';
import { parseDuration } from '../policy/duration';
import { LimiterEmitter } from '../resilience/events';
import { resolveOnStoreError } from '../resilience/on-store-error';
import { resolveLease } from '../resilience/token-lease';
import { MemoryStore } from '../stores/memory-store';
import type { Store } from '../stores/store';
import type { Decision, Policy } from '../types';
import { cancelling } from './cancel';
import { decisionMaker, type Target } from './decisions';
import { checkCost, OPTION_NAMES, resolveBlockCache, supportsRules } from './limiter-options';
import { partDecision, registerSide } from './limiter-side';
import type { Limiter, LimiterOptions, LimiterRulesOptions } from './limiter-types';
import { reported, resolveMetrics } from './metrics-sink';
import { createOverrides, type OverrideBase } from './overrides';
import { remotePath } from './remote-path';
import { resolveRules } from './rules';

export type {
  ConsumeOptions,
  Limiter,
  LimiterOptions,
  LimiterRulesOptions,
  PeekOptions,
} from './limiter-types';

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
  const metrics = resolveMetrics(options, prefix, store);
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

  const decisions = decisionMaker(events);
  const decisionOf = decisions.of;
  // In-process stores answer synchronously and cannot be unavailable; remote ones are guarded.
  const lease = (options as LimiterOptions).lease;
  if (store.consumeSync !== undefined && lease !== undefined) {
    resolveLease(lease, policy, parseDuration); // a bad value is named first
    throw new SluiceConfigError(
      'lease',
      lease,
      'is for a remote store (Redis): an in-process store decides without a round trip',
    );
  }
  const remote =
    store.consumeSync === undefined
      ? remotePath({
          store,
          prefix,
          policies,
          onStoreError,
          timeoutMs,
          events,
          clock,
          now,
          blockCacheKeys,
          lease,
          decisions,
          metrics,
        })
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
    const decision = decisionOf(
      (store.consumeSync as NonNullable<Store['consumeSync']>)(scratch),
      key,
      policy,
      undefined,
    );
    return reported(metrics, decision, cost);
  };
  const decideSync = (key: string, cost: number, target: Target): Decision => {
    if (target.policies.length > 1) {
      const request = { prefix, key, policies: target.policies, cost, nowMs: now(), scope: target.scope };
      const verdicts = (store.consumeRulesSync as NonNullable<Store['consumeRulesSync']>)(request);
      return reported(metrics, decisions.ofRules(verdicts, target, key, undefined), cost);
    }
    scratch.key = key;
    scratch.cost = cost;
    scratch.nowMs = now();
    scratch.policy = target.policies[0] as Policy;
    scratch.scope = target.scope;
    const decision = decisionOf(
      (store.consumeSync as NonNullable<Store['consumeSync']>)(scratch),
      key,
      scratch.policy,
      undefined,
    );
    return reported(metrics, decision, cost);
  };

  // Not async: a bad key or clock is a programming error, thrown at the call, not a rejection.
  const decide = (key: string, cost: number, context: unknown): Promise<Decision> => {
    checkKey(key);
    if (remote === undefined)
      return Promise.resolve(
        plain ? decidePlainSync(key, cost) : decideSync(key, cost, targetOf(key, context)),
      );
    return remote.decide(key, cost, targetOf(key, context));
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
    timeoutMs: remote === undefined ? undefined : timeoutMs,
    bound: remote?.side.guard.bound,
    forget: (key) => remote?.forget(key),
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
      if (remote !== undefined) return undefined;
      const cost = consumeOptions?.cost === undefined ? defaultCost : checkCost('cost', consumeOptions.cost);
      checkKey(key);
      return plain
        ? decidePlainSync(key, cost)
        : decideSync(key, cost, targetOf(key, consumeOptions?.context));
    },
    peek(key, peekOptions) {
      return decide(key, 0, peekOptions?.context);
    },
    cancel(decision, cancelOptions) {
      const cost = cancelOptions?.cost === undefined ? defaultCost : checkCost('cost', cancelOptions.cost);
      return cancel(decision, cost);
    },
    reset(key) {
      if (typeof key !== 'string')
        throw new SluiceConfigError('key', key, 'must be a string', 'SLUICE_INVALID_ARGUMENT');
      remote?.forget(key);
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
  // What `consumeAll` (several limits on one request) needs of this limiter.
  registerSide(limiter, {
    store,
    part(key, cost, context, dryRun) {
      checkKey(key);
      const units = cost === undefined ? defaultCost : checkCost('cost', cost);
      const target = targetOf(key, context);
      const { policies: rules, scope } = target;
      return { part: { prefix, key, policies: rules, cost: units, nowMs: now(), scope, dryRun }, target };
    },
    decision: (verdicts, target, { key, cost }, degraded) =>
      reported(metrics, partDecision(decisions, verdicts, target, key, degraded), cost),
    remote: remote?.side,
  });
  return limiter;
}
