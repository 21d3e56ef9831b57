import type { JointPart, Store } from '../stores/store';
import type { Verdict } from '../types';
import type { Refund, TakenAll } from './consume-all-types';
import type { Target } from './decisions';
import { inTurn } from './in-turn';
import { untilRefused, type Joint } from './joint';
import type { LimiterSide, RemoteSide } from './limiter-side';

/** One script call for every part; when it fails, each limit is decided by its `onStoreError`. */
export async function inOneCall(joint: Joint, store: Store): Promise<TakenAll> {
  const { sides, parts, targets } = joint;
  const remotes = sides.map(({ remote }) => remote as RemoteSide);
  const at = remotes.map((remote) => remote.localNow());
  // Bounded by the shortest `timeoutMs`, on the deadline list of a guard that has it.
  let soonest = remotes[0] as RemoteSide;
  for (const remote of remotes) if (remote.timeoutMs < soonest.timeoutMs) soonest = remote;
  const call = Promise.resolve().then(() => (store.consumeAll as NonNullable<Store['consumeAll']>)(parts));
  let result: Awaited<typeof call>;
  try {
    // Answered after the parts were decided by their onStoreError: what it took goes back.
    result = await soonest.guard.bound(call, (late) =>
      remotes.forEach((remote, i) => {
        const taken = late.receipts[i];
        if (taken !== undefined) remote.guard.giveBackLate(parts[i] as JointPart, taken);
      }),
    );
  } catch (error) {
    remotes.forEach((remote, i) => remote.guard.record((parts[i] as JointPart).key, error));
    return inTurn(joint, async (i) => {
      const { verdicts, degraded, giveBack } = await (remotes[i] as RemoteSide).guard.degradePart(
        parts[i] as JointPart,
      );
      const decision = (sides[i] as LimiterSide).decision(
        verdicts,
        targets[i] as Target,
        parts[i] as JointPart,
        degraded,
      );
      return { decision, giveBack };
    });
  }
  remotes.forEach((remote, i) => remote.guard.record((parts[i] as JointPart).key));
  const decisions = untilRefused(parts, (part, i) => {
    const remote = remotes[i] as RemoteSide;
    const decision = (sides[i] as LimiterSide).decision(
      result.verdicts[i] as Verdict[],
      targets[i] as Target,
      part,
      undefined,
    );
    remote.remember(part.key, part.cost, at[i] as number, decision, targets[i] as Target);
    return decision;
  });
  const refunds = parts.map((part, i): Refund | undefined => {
    const taken = result.receipts[i];
    return taken === undefined ? undefined : () => (remotes[i] as RemoteSide).giveBackTaken(part, taken);
  });
  return { decisions, refunds };
}
