import type { Refund } from './consume-all-types';

const DONE = Promise.resolve();

/**
 * Runs every refund at once; resolves when all have settled. A refund never fails the request:
 * a store that fails it has reported it. Each in its own reaction, so that one whose store
 * throws instead of rejecting cannot skip the others.
 */
export function refundAll(refunds: ReadonlyArray<(() => unknown) | undefined>): Promise<unknown> {
  return Promise.all(
    refunds.map((refund) => (refund === undefined ? undefined : DONE.then(refund).catch(() => undefined))),
  );
}

/** The refunds of a request that keeps nothing to give back: none taken, or all given back already. */
export const NO_REFUNDS: ReadonlyArray<Refund | undefined> = [];
