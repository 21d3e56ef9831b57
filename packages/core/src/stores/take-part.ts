import type { Receipt, Verdict } from '../types';
import type { JointPart, Store } from './store';

/** One part taken alone: its verdicts, and its receipts when it was written. */
export interface TakenPart {
  readonly verdicts: readonly Verdict[];
  readonly receipts: readonly Receipt[] | undefined;
}

/**
 * Decides one limiter's part alone with a store's joint methods, so that its receipts come
 * back for an exact give-back: `prepareAllSync` + commit (in-process, one synchronous step) or a
 * one-part `consumeAll`. `undefined` when the store has neither (a custom store).
 */
export function takeAlone(store: Store, part: JointPart): Promise<TakenPart> | undefined {
  if (store.prepareAllSync !== undefined) {
    const prepared = store.prepareAllSync([part]);
    const receipts = prepared.commit([part.probe !== true])[0];
    // A refusal (or a probe) writes nothing: its admitting rules report their state as it stays.
    return Promise.resolve({
      verdicts: receipts === undefined ? prepared.unchanged(0) : (prepared.verdicts[0] as Verdict[]),
      receipts,
    });
  }
  if (store.consumeAll === undefined) return undefined;
  return store.consumeAll([part]).then(({ verdicts, receipts }) => ({
    verdicts: verdicts[0] as Verdict[],
    receipts: receipts[0],
  }));
}
