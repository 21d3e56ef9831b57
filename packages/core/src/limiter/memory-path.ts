import type { Store } from '../stores/store';
import type { BlockPolicy, Decision, Policy } from '../types';
import type { DecisionMaker, Target } from './decisions';
import { reported } from './metrics-sink';
import type { ResolvedLimiterOptions } from './resolve-limiter-options';

/** What the in-process path needs of its limiter. */
export type MemoryPathOptions = Pick<
  ResolvedLimiterOptions,
  'store' | 'prefix' | 'policy' | 'policies' | 'now' | 'metrics' | 'overridden' | 'block'
>;

/**
 * The decisions of a limiter on an in-process store (one with `consumeSync`): synchronous, and
 * never degraded, as such a store cannot be unavailable.
 */
export interface MemoryPath {
  /**
   * One policy and no overrides: every key's target is the limiter's own, so
   * {@link MemoryPath.decidePlainSync} decides it without looking the target up.
   */
  readonly plain: boolean;
  /** A key of a {@link MemoryPath.plain} limiter. */
  decidePlainSync(key: string, cost: number): Decision;
  /** A key limited by `target` (its override's policies, or the limiter's own). */
  decideSync(key: string, cost: number, target: Target): Decision;
}

/**
 * The in-process path of a limiter: asks the store synchronously and reports the decision.
 * Building it costs a few closures and touches nothing; its functions may be called only when
 * `store` has `consumeSync`.
 *
 * @param options - the limiter's resolved options
 * @param decisions - builds the limiter's decisions and tells its listeners
 */
export function memoryPath(options: MemoryPathOptions, decisions: DecisionMaker): MemoryPath {
  const { store, prefix, policy, policies, now, metrics, block } = options;
  const decisionOf = decisions.of;
  // The in-process path reuses one request object: consumeSync neither keeps it nor yields, so
  // a decision allocates nothing but the decision itself.
  const scratch: {
    prefix: string;
    key: string;
    policy: Policy;
    cost: number;
    nowMs: number | undefined;
    scope: string | undefined;
    block: BlockPolicy | undefined;
  } = { prefix, key: '', policy, cost: 0, nowMs: undefined, scope: undefined, block };
  // One policy and no overrides: the target is always the limiter's own, and the scratch request
  // already holds its policy, so the hot in-process path does no more than it did before rules.
  const plain = !options.overridden && policies.length === 1;
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
      const request = {
        prefix,
        key,
        policies: target.policies,
        cost,
        nowMs: now(),
        scope: target.scope,
        block,
      };
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
  return { plain, decidePlainSync, decideSync };
}
