import type { JointPart, Store } from '../stores/store';
import { takeAlone } from '../stores/take-part';
import type { Decision } from '../types';
import type { Refund, TakeRequest, TakenAll } from './consume-all-types';
import type { Target } from './decisions';
import type { Joint } from './joint';
import type { LimiterSide, TakenDecision } from './limiter-side';
import { NO_REFUNDS, refundAll } from './refund-all';
import type { TurnBudget } from './turn-budget';

/**
 * Part `i` alone: through its remote path, within the time `budget` leaves (see
 * {@link TurnBudget}), or its in-process store with its receipts.
 */
export async function takeOne(
  { sides, parts, targets, requests }: Joint,
  i: number,
  budget: TurnBudget | undefined,
): Promise<TakenDecision> {
  const side = sides[i] as LimiterSide;
  const part = parts[i] as JointPart;
  const target = targets[i] as Target;
  const { remote } = side;
  if (remote !== undefined) {
    if (budget === undefined) return remote.take(part, target);
    const late = async (): Promise<TakenDecision> => {
      const { verdicts, degraded, giveBack } = await remote.guard.degradePart(part);
      return { decision: side.decision(verdicts, target, part, degraded), giveBack };
    };
    const left = budget.left();
    if (left === 0) return late();
    // The store is told the time left too: a request still waiting for its call then is not sent.
    return budget.within(remote.take({ ...part, timeoutMs: left }, target), late, refundLate);
  }
  const taken = takeAlone(side.store, part);
  if (taken === undefined) {
    const { limiter, context } = requests[i] as TakeRequest;
    return { decision: await limiter.consume(part.key, { cost: part.cost, context }) };
  }
  const { verdicts, receipts } = await taken;
  const decision = side.decision(verdicts, target, part, undefined);
  const { store } = side;
  if (receipts === undefined || store.giveBackTaken === undefined) return { decision };
  return {
    decision,
    giveBack: () => (store.giveBackTaken as NonNullable<Store['giveBackTaken']>)(part, receipts),
  };
}

/** What a part's store took after its turn was decided without it: given back. */
function refundLate({ decision, giveBack }: TakenDecision): void {
  if (decision.allowed && giveBack !== undefined) void refundAll([giveBack]);
}

/**
 * The parts in order: when an enforcing part refuses, the later ones are not asked and what the
 * earlier ones took is given back, before the decisions resolve (waited for within `budget`:
 * past it, the give-backs go on without the request).
 */
export async function inTurn(
  { parts }: Joint,
  take: (i: number) => Promise<TakenDecision>,
  budget?: TurnBudget,
): Promise<TakenAll> {
  const decisions: Array<Decision | undefined> = parts.map(() => undefined);
  const refunds: Array<Refund | undefined> = [];
  for (let i = 0; i < parts.length; i++) {
    const { decision, giveBack } = await take(i);
    decisions[i] = decision;
    if (decision.allowed) {
      refunds[i] = giveBack;
    } else if ((parts[i] as JointPart).dryRun !== true) {
      const refunded = refundAll(refunds);
      await (budget === undefined ? refunded : budget.within(refunded, () => undefined));
      return { decisions, refunds: NO_REFUNDS };
    }
  }
  return { decisions, refunds };
}
