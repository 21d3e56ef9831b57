import type { Verdict } from '../types';
import type { Outcome } from './outcome';
import type { Store, StoreRequest } from './store';

export type { Outcome } from './outcome';

/**
 * `consume` that tells its outcome to `to` instead of returning a promise. sluice's own remote
 * store has it, for the guard's calls (the hottest path of a remote store): no promise, closures
 * or reaction between the store's reply and the guard, where `consume(...).then(...)` makes
 * them per call. Internal: a symbol, not part of the `Store` interface.
 */
export const CONSUME_TO: unique symbol = Symbol('sluice.consumeTo');

/** A store with {@link CONSUME_TO}. */
export interface ConsumesTo {
  [CONSUME_TO](request: StoreRequest, to: Outcome<Verdict>): void;
}

export function consumesTo(store: Store): store is Store & ConsumesTo {
  return typeof (store as Partial<ConsumesTo>)[CONSUME_TO] === 'function';
}
