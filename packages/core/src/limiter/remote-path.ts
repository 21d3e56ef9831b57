import { parseDuration } from '../policy/duration';
import { SluiceConfigError } from '../policy/config-error';
import { BlockCache, type Block } from '../resilience/block-cache';
import type { LimiterEmitter } from '../resilience/events';
import type { ResolvedOnStoreError } from '../resilience/on-store-error';
import { guardStore } from '../resilience/store-guard';
import { leasing, resolveLease } from '../resilience/token-lease';
import type { Store } from '../stores/store';
import type { Decision, Policy } from '../types';
import type { DecisionMaker, Target } from './decisions';

/** What the remote path needs of its limiter, its options validated. */
export interface RemotePathOptions {
  readonly store: Store;
  readonly prefix: string;
  readonly policies: readonly Policy[];
  readonly onStoreError: ResolvedOnStoreError;
  readonly timeoutMs: number;
  readonly events: LimiterEmitter;
  /** The limiter's clock, if any (tests); the block cache and lease read `Date.now` otherwise. */
  readonly clock: (() => number) | undefined;
  /** The request's time to send the store: the clock's, checked, or `undefined` for the store's own. */
  readonly now: () => number | undefined;
  /** `maxKeys` of the block cache; 0 without one. */
  readonly blockCacheKeys: number;
  /** The `lease` option as given. */
  readonly lease: unknown;
  readonly decisions: DecisionMaker;
}

/** A remote store's decisions, guarded, with the block cache and leasing in front. */
export interface RemotePath {
  decide(key: string, cost: number, target: Target): Promise<Decision>;
  /** Forgets what the block cache knows of a key (after a reset or a cancel). */
  forget(key: string): void;
}

/**
 * The path of a limiter on a remote store (Redis): each call bounded by `timeoutMs` behind a
 * circuit breaker, decided by `onStoreError` when the store fails; a key the store said is
 * limited until T is refused locally until T (block cache); a hot key may lease units.
 *
 * @throws {@link SluiceConfigError} when `lease` is invalid or asked with several rules
 */
export function remotePath(options: RemotePathOptions): RemotePath {
  const { store, prefix, policies, now, decisions, timeoutMs } = options;
  const guard = guardStore({
    store,
    onStoreError: options.onStoreError,
    timeoutMs,
    events: options.events,
    now: options.clock ?? Date.now,
  });
  const localNow = options.clock ?? Date.now;
  const blocks = options.blockCacheKeys > 0 ? new BlockCache(options.blockCacheKeys) : undefined;
  const lease = resolveLease(options.lease, policies[0] as Policy, parseDuration);
  if (lease !== undefined && policies.length > 1)
    throw new SluiceConfigError('lease', options.lease, 'takes one rule, not several');
  const consumeOne =
    lease === undefined
      ? (request: Parameters<typeof guard.consume>[0]) => guard.consume(request)
      : leasing((request) => guard.consume(request), lease[0], lease[1], localNow);

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
        reason: 'limited',
      },
      key,
      block.policy,
      block.limits,
    );
  };

  return {
    decide(key, cost, target) {
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
        return guard
          .consumeRules({ prefix, key, policies: target.policies, cost, nowMs: now(), scope, timeoutMs })
          .then(({ verdicts, degraded }) => remembered(decisions.ofRules(verdicts, target, key, degraded)));
      }
      const decidedBy = target.policies[0] as Policy;
      return consumeOne({ prefix, key, policy: decidedBy, cost, nowMs: now(), scope, timeoutMs }).then(
        (verdict) => remembered(decisions.of(verdict, key, decidedBy, undefined)),
      );
    },
    forget(key) {
      blocks?.forget(key);
    },
  };
}
