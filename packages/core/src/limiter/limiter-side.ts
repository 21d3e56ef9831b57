import type { GuardedVerdict, StoreGuard } from '../resilience/store-guard';
import type { JointPart, Store } from '../stores/store';
import type { Decision, Policy, Receipt, Verdict } from '../types';
import type { DecisionMaker, Target } from './decisions';
import type { Limiter } from './limiter-types';
import type { LimiterMetrics } from './metrics-sink';

/** A decision taken for one limit of a request, and how to give back what it took. */
export interface TakenDecision {
  readonly decision: Decision;
  /** Gives back exactly what the decision took; absent when nothing was taken or nothing can be given back. */
  readonly giveBack?: () => Promise<unknown>;
}

/** What a request with several limits needs of a limiter on a remote store. */
export interface RemoteSide {
  readonly timeoutMs: number;
  /** Whether its parts may be decided in one call with other limiters' (not with `lease`: leased units are spent here). */
  readonly joinable: boolean;
  readonly guard: StoreGuard;
  /** Local epoch ms (the limiter's clock, or `Date.now`), as the block cache counts. */
  localNow(): number;
  /** The block cache's refusal of the request, if the store said the key is limited. */
  blocked(key: string, cost: number, target: Target, at: number): Decision | undefined;
  /** Remembers the store's refusal in the block cache. */
  remember(key: string, cost: number, at: number, decision: Decision, target: Target): void;
  /** Decides one part alone (block cache, lease, guard, `onStoreError`), with its give-back. */
  take(part: JointPart, target: Target): Promise<TakenDecision>;
  /** Gives back exactly what a part took in a call made with other limiters', with its receipts; never rejects. */
  giveBackTaken(part: JointPart, receipts: readonly Receipt[]): Promise<unknown>;
}

/** What a request with several limits needs of a limiter made by `createLimiter`. */
export interface LimiterSide {
  readonly store: Store;
  /** The part of a request for this limiter: its key's rules, cost and time; throws as `consume` does. */
  part(
    key: string,
    cost: number | undefined,
    context: unknown,
    dryRun: boolean,
  ): { part: JointPart; target: Target };
  /** The decision of a part's verdicts, reported to the limiter's `metrics` as `consume` does. */
  decision(
    verdicts: readonly Verdict[],
    target: Target,
    part: JointPart,
    degraded: GuardedVerdict['degraded'],
  ): Decision;
  /** `undefined` for an in-process store. */
  readonly remote: RemoteSide | undefined;
  /** The policies of every key when the limiter has no `overrides` (its own); `undefined` with them. */
  readonly fixed: readonly Policy[] | undefined;
  /** The units a request takes when its call gives no `cost`. */
  readonly defaultCost: number;
  /** The limiter's `metrics`, for what the HTTP layer reports of it (a give-back by `countWhen`). */
  readonly metrics: LimiterMetrics | undefined;
  /** The limiter's clock (`undefined` without one: the store reads its own), to time a give-back when it happens. */
  readonly now: () => number | undefined;
}

const sides = new WeakMap<Limiter, LimiterSide>();

/** Registers what `consumeAll` needs of a limiter made by `createLimiter`. */
export function registerSide(limiter: Limiter, side: LimiterSide): void {
  sides.set(limiter, side);
}

/** The side of a limiter made by `createLimiter`; `undefined` for any other object. */
export function sideOf(limiter: Limiter): LimiterSide | undefined {
  return sides.get(limiter);
}

/** The decision of one part's verdicts: one rule's, or several rules' as `consumeRules` gives. */
export function partDecision(
  decisions: DecisionMaker,
  verdicts: readonly Verdict[],
  target: Target,
  key: string,
  degraded: GuardedVerdict['degraded'],
): Decision {
  if (target.policies.length > 1) return decisions.ofRules(verdicts, target, key, degraded);
  const verdict = verdicts[0] as Verdict;
  return decisions.of(
    degraded === undefined ? verdict : { ...verdict, degraded },
    key,
    target.policies[0] as Policy,
    undefined,
  );
}
