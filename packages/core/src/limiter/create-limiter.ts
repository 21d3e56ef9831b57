import { LimiterEmitter } from '../resilience/events';
import type { Store } from '../stores/store';
import type { Decision, Policy } from '../types';
import { cancelling } from './cancel';
import { decisionMaker, type Target } from './decisions';
import { checkCallOptions, checkCost, checkKey } from './limiter-options';
import { partDecision, registerSide } from './limiter-side';
import type { Limiter, LimiterOptions, LimiterRulesOptions } from './limiter-types';
import { memoryPath } from './memory-path';
import { reported } from './metrics-sink';
import { remotePath } from './remote-path';
import { resolveLimiterOptions } from './resolve-limiter-options';

export type {
  ConsumeOptions,
  Limiter,
  LimiterOptions,
  LimiterRulesOptions,
  PeekOptions,
} from './limiter-types';

/** The options each call takes: anything else is named at the call. */
const CONSUME_OPTIONS = ['cost', 'context'] as const;
const PEEK_OPTIONS = ['context'] as const;
const CANCEL_OPTIONS = ['cost'] as const;

/**
 * Creates a limiter: its options resolved and validated once, here, then its in-process or
 * remote path wired to them.
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
  const events = new LimiterEmitter();
  const resolved = resolveLimiterOptions(options, events);
  const { policy, policies, store, prefix, now, defaultCost, timeoutMs, metrics, own, targetOf, block } =
    resolved;
  const decisions = decisionMaker(events);
  // In-process stores answer synchronously and cannot be unavailable; remote ones are guarded.
  const remote = store.consumeSync === undefined ? remotePath({ ...resolved, events, decisions }) : undefined;
  // Destructured into locals, so a decision calls the in-process path as directly as when it was
  // written here (benchmarked against a plain Map); its few closures are built even for a remote
  // store, never called there.
  const { plain, decidePlainSync, decideSync } = memoryPath(resolved, decisions);

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
          block,
        })
      : store.reset({ prefix, key, policy: rules[0] as Policy, nowMs: now(), scope, block });

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
      checkCallOptions(consumeOptions, CONSUME_OPTIONS);
      const cost = consumeOptions?.cost === undefined ? defaultCost : checkCost('cost', consumeOptions.cost);
      return decide(key, cost, consumeOptions?.context);
    },
    consumeSync(key, consumeOptions) {
      if (remote !== undefined) return undefined;
      checkCallOptions(consumeOptions, CONSUME_OPTIONS);
      const cost = consumeOptions?.cost === undefined ? defaultCost : checkCost('cost', consumeOptions.cost);
      checkKey(key);
      return plain
        ? decidePlainSync(key, cost)
        : decideSync(key, cost, targetOf(key, consumeOptions?.context));
    },
    peek(key, peekOptions) {
      checkCallOptions(peekOptions, PEEK_OPTIONS);
      return decide(key, 0, peekOptions?.context);
    },
    cancel(decision, cancelOptions) {
      checkCallOptions(cancelOptions, CANCEL_OPTIONS);
      const cost = cancelOptions?.cost === undefined ? defaultCost : checkCost('cost', cancelOptions.cost);
      return cancel(decision, cost);
    },
    reset(key) {
      checkKey(key);
      remote?.reset(key);
      // An overridden key forgets both: its override's state and its state under the limiter's own.
      const target = targetOf(key, undefined);
      const reset =
        target === own
          ? resetTarget(key, own)
          : Promise.all([resetTarget(key, own), resetTarget(key, target)]).then(() => undefined);
      // Bounded as every call of a remote store is: a store that does not answer within
      // `timeoutMs` rejects it (the reset may still happen when the store gets it).
      return remote === undefined ? reset : remote.side.guard.bound(reset);
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
      return {
        part: { prefix, key, policies: rules, cost: units, nowMs: now(), scope, dryRun, block },
        target,
      };
    },
    decision: (verdicts, target, { key, cost }, degraded) =>
      reported(metrics, partDecision(decisions, verdicts, target, key, degraded), cost),
    remote: remote?.side,
    fixed: resolved.overridden ? undefined : policies,
    defaultCost,
    metrics,
    now,
  });
  return limiter;
}
