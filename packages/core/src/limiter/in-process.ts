import type { JointPart, PreparedJoint, Store } from '../stores/store';
import type { Verdict } from '../types';
import type { Refund, TakenAll } from './consume-all-types';
import type { Target } from './decisions';
import { untilRefused, type Joint } from './joint';
import type { LimiterSide } from './limiter-side';
import { retimed } from './in-process-give-back';

/** Every part checked, then every admitted part written, in one synchronous step. */
export function inProcess({ sides, parts, targets }: Joint): TakenAll {
  const byStore = new Map<Store, number[]>();
  parts.forEach((_, i) => {
    const { store } = sides[i] as LimiterSide;
    const indexes = byStore.get(store);
    if (indexes === undefined) byStore.set(store, [i]);
    else indexes.push(i);
  });
  // Where each part's verdicts are: its store's prepared decision, at this place.
  const at: Array<[PreparedJoint, number]> = [];
  const prepared: Array<[PreparedJoint, number[]]> = [];
  for (const [store, indexes] of byStore) {
    const joint = (store.prepareAllSync as NonNullable<Store['prepareAllSync']>)(
      indexes.map((i) => parts[i] as JointPart),
    );
    prepared.push([joint, indexes]);
    indexes.forEach((i, place) => (at[i] = [joint, place]));
  }
  const admits = (i: number): boolean => {
    const [joint, place] = at[i] as [PreparedJoint, number];
    return (joint.verdicts[place] as readonly Verdict[]).every((v) => v.allowed);
  };
  const admitted = parts.every((part, i) => part.dryRun === true || admits(i));
  const refunds: Array<Refund | undefined> = [];
  if (admitted) {
    for (const [joint, indexes] of prepared) {
      const receipts = joint.commit(indexes.map((i) => (parts[i] as JointPart).probe !== true));
      indexes.forEach((i, place) => {
        const { store } = sides[i] as LimiterSide;
        const taken = receipts[place];
        if (taken !== undefined && store.giveBackTaken !== undefined) {
          const part = parts[i] as JointPart;
          refunds[i] = () =>
            (store.giveBackTaken as NonNullable<Store['giveBackTaken']>)(
              retimed(part, sides[i] as LimiterSide),
              taken,
            );
        }
      });
    }
  }
  const decisions = untilRefused(parts, (part, i) => {
    const [joint, place] = at[i] as [PreparedJoint, number];
    const written = admitted && admits(i) && part.probe !== true;
    const verdicts = written ? (joint.verdicts[place] as Verdict[]) : joint.unchanged(place);
    return (sides[i] as LimiterSide).decision(verdicts, targets[i] as Target, part, undefined);
  });
  return { decisions, refunds };
}
