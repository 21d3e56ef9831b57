import { BlockCache, type Block } from '../resilience/block-cache';
import type { LimiterEmitter } from '../resilience/events';
import { guardStore } from '../resilience/store-guard';
import { leasing } from '../resilience/token-lease';
import type { Decision, Policy } from '../types';
import type { DecisionMaker, Target } from './decisions';
import { partDecision, type RemoteSide } from './limiter-side';
import { reported } from './metrics-sink';
import type { ResolvedLimiterOptions } from './resolve-limiter-options';

/** What the remote path needs of its limiter, its options resolved. */
export interface RemotePathOptions extends Pick<
  ResolvedLimiterOptions,
  | 'store'
  | 'prefix'
  | 'onStoreError'
  | 'timeoutMs'
  | 'clock'
  | 'now'
  | 'blockCacheKeys'
  | 'lease'
  | 'metrics'
  | 'block'
> {
  readonly events: LimiterEmitter;
  readonly decisions: DecisionMaker;
}

/** A remote store's decisions, guarded, with the block cache and leasing in front. */
export interface RemotePath {
  decide(key: string, cost: number, target: Target): Promise<Decision>;
  /** Forgets what the block cache knows of a key (after a reset or a cancel). */
  forget(key: string): void;
  /** After a reset: forgets the block cache's entry and drops the key's lease and remembered refusal. */
  reset(key: string): void;
  /** What a request with several limits needs of this path (see `consumeAll`). */
  readonly side: RemoteSide;
}

/**
 * The path of a limiter on a remote store (Redis): each call bounded by `timeoutMs` behind a
 * circuit breaker, decided by `onStoreError` when the store fails; a key the store said is
 * limited until T is refused locally until T (block cache); a hot key may lease units.
 */
export function remotePath(options: RemotePathOptions): RemotePath {
  const { store, prefix, now, decisions, metrics, timeoutMs, block: blocking } = options;
  const guard = guardStore({
    store,
    onStoreError: options.onStoreError,
    timeoutMs,
    events: options.events,
    now: options.clock ?? Date.now,
    metrics,
  });
  const localNow = options.clock ?? Date.now;
  const blocks = options.blockCacheKeys > 0 ? new BlockCache(options.blockCacheKeys) : undefined;
  const { lease } = options;
  const leased =
    lease === undefined
      ? undefined
      : leasing(
          (request) => {
            metrics?.leaseCall();
            return guard.consume(request);
          },
          lease[0],
          lease[1],
          localNow,
          guard.degrade,
        );
  const consumeOne = leased ?? ((request: Parameters<typeof guard.consume>[0]) => guard.consume(request));

  const blockedDecision = (block: Block, key: string, at: number): Decision => {
    const retryAfterMs = block.until - at;
    const resetMs = Math.max(retryAfterMs, block.resetAt - at);
    return decisions.of(
      {
        allowed: false,
        limit: block.limit,
        remaining: 0,
        resetMs,
        retryAfterMs,
        delayMs: 0,
        reason: block.reason,
      },
      key,
      block.policy,
      block.limits,
    );
  };

  const blocked: RemoteSide['blocked'] = (key, cost, target, at) => {
    const block = blocks?.find(key, cost, at, target.policies);
    if (block === undefined) return undefined;
    metrics?.blockCacheHit();
    return reported(metrics, blockedDecision(block, key, at), cost);
  };
  // Only the store's own answer is remembered, from the time the request left: T is never overstated.
  // With `block`, the store's refusal as limited has blocked the key for at least `durationMs`
  // (its retry covers the whole block, whose length this instance does not know): refused
  // whatever the cost for that long, then the store tells the rest.
  const remember: RemoteSide['remember'] = (key, cost, at, decision, target) => {
    if (blocks === undefined || decision.degraded !== undefined) return;
    if (decision.reason === 'blocked') blocks.remember(key, cost, at, decision, target.policies);
    else if (decision.reason !== 'limited') return;
    else if (blocking === undefined) blocks.remember(key, cost, at, decision, target.policies);
    else {
      const retryAfterMs = Math.min(decision.retryAfterMs, blocking.durationMs);
      const rejection = { ...decision, retryAfterMs, reason: 'blocked' as const };
      blocks.remember(key, cost, at, rejection, target.policies);
    }
  };

  // Not a closure per request: the decision's own key.
  const remembered = (decision: Decision, cost: number, startedAt: number, target: Target): Decision => {
    remember(decision.key, cost, startedAt, decision, target);
    return reported(metrics, decision, cost);
  };

  const decide: RemotePath['decide'] = (key, cost, target) => {
    const startedAt = blocks === undefined ? 0 : localNow();
    const block = blocks === undefined ? undefined : blocked(key, cost, target, startedAt);
    if (block !== undefined) return Promise.resolve(block);
    const { scope } = target;
    if (target.policies.length > 1) {
      return guard
        .consumeRules({
          prefix,
          key,
          policies: target.policies,
          cost,
          nowMs: now(),
          scope,
          timeoutMs,
          block: blocking,
        })
        .then(({ verdicts, degraded }) =>
          remembered(decisions.ofRules(verdicts, target, key, degraded), cost, startedAt, target),
        );
    }
    const decidedBy = target.policies[0] as Policy;
    const request = { prefix, key, policy: decidedBy, cost, nowMs: now(), scope, timeoutMs, block: blocking };
    return consumeOne(request).then((verdict) =>
      remembered(decisions.of(verdict, key, decidedBy, undefined), cost, startedAt, target),
    );
  };

  const take: RemoteSide['take'] = async (part, target) => {
    const { key, cost } = part;
    const joint = store.consumeAll !== undefined || store.prepareAllSync !== undefined;
    // A probe asks the store, which writes nothing for it: a lease would take its units. (The
    // store does not see the units this instance holds leased: a probe may be refused while
    // some are left here, never admitted without one. A custom store takes the unit.)
    if ((leased !== undefined && part.probe !== true) || !joint) {
      const decision = await decide(key, cost, target);
      const taken = decision.allowed && decision.degraded === undefined && cost > 0;
      // Leased units go back to the key's local lease; a custom store's cannot be given back.
      if (!taken || leased === undefined) return { decision };
      return { decision, giveBack: async () => leased.giveBack(key, cost, decision) };
    }
    const at = localNow();
    const block = blocked(key, cost, target, at);
    if (block !== undefined) return { decision: block };
    const { verdicts, degraded, giveBack } = await guard.takePart(part);
    const decision = reported(metrics, partDecision(decisions, verdicts, target, key, degraded), cost);
    remember(key, cost, at, decision, target);
    if (giveBack === undefined) return { decision };
    return {
      decision,
      giveBack: () => {
        blocks?.forget(key);
        return giveBack();
      },
    };
  };

  return {
    decide,
    side: {
      timeoutMs: options.timeoutMs,
      joinable: leased === undefined,
      guard,
      localNow,
      blocked,
      remember,
      take,
      giveBackTaken(part, receipts) {
        blocks?.forget(part.key);
        return guard.giveBackTaken(part, receipts);
      },
    },
    forget(key) {
      blocks?.forget(key);
    },
    reset(key) {
      blocks?.forget(key);
      leased?.forget(key);
    },
  };
}
