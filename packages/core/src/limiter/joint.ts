import type { JointPart } from '../stores/store';
import type { Decision } from '../types';
import type { TakeRequest } from './consume-all-types';
import type { Target } from './decisions';
import type { LimiterSide } from './limiter-side';

/** One request's limits as one joint decision: per limit, its request, side, part and target (its key's policies). */
export interface Joint {
  readonly requests: readonly TakeRequest[];
  readonly sides: readonly LimiterSide[];
  readonly parts: readonly JointPart[];
  readonly targets: readonly Target[];
}

/** Whether every side decides in process, in one synchronous step with the others. */
export function inProcessSides(sides: readonly LimiterSide[]): boolean {
  return sides.every(({ remote, store }) => remote === undefined && store.prepareAllSync !== undefined);
}

/** The requests as parts of one joint decision, each with its target (its key's policies). */
export function jointOf(requests: readonly TakeRequest[], sides: readonly LimiterSide[]): Joint {
  const parts: JointPart[] = [];
  const targets: Target[] = [];
  requests.forEach(({ key, cost, context, dryRun = false, probe }, i) => {
    const { part, target } = (sides[i] as LimiterSide).part(key, cost, context, dryRun);
    parts.push(probe === true ? { ...part, probe } : part);
    targets.push(target);
  });
  return { requests, sides, parts, targets };
}

/**
 * The decisions in order up to the first refusal by a limit that may refuse, as nginx reports
 * several `limit_req`: the later limits are left out (`undefined`), whatever they would say, so
 * every path reports the same refusal.
 */
export function untilRefused(
  parts: readonly JointPart[],
  decide: (part: JointPart, i: number) => Decision,
): Array<Decision | undefined> {
  let refused = false;
  return parts.map((part, i) => {
    if (refused) return undefined;
    const decision = decide(part, i);
    if (!decision.allowed && part.dryRun !== true) refused = true;
    return decision;
  });
}
