import { giveBackOf } from '../algorithms/give-back';
import type { Store } from '../stores/store';
import type { Decision, Policy } from '../types';
import { scopeOf } from './overrides';

/** What {@link cancelling} needs of its limiter. */
export interface CancelOptions {
  readonly store: Store;
  readonly prefix: string;
  /** The limiter's own policies: a decision by others was by a per-key override. */
  readonly own: readonly Policy[];
  readonly now: () => number | undefined;
  /** A remote store's calls' bound, sent with the call; `undefined` for an in-process store. */
  readonly timeoutMs: number | undefined;
  /** Bounds a remote store's call by `timeoutMs` (its guard's deadline list); `undefined` for an in-process store. */
  readonly bound: (<T>(promise: Promise<T>) => Promise<T>) | undefined;
  /** Forgets what the limiter cached about the key (its block): the turn given back is usable at once. */
  readonly forget: (key: string) => void;
}

const NOTHING = Promise.resolve(false);

/**
 * `limiter.cancel(decision, cost)`: gives back the turn of an admission that was delayed (a
 * queue, the leaky bucket without `nodelay`, warm-up) and will not be served, such as a request
 * whose client disconnected while held, so a later request may take it. Resolves `true` when
 * the store took the units back; `false` when there was nothing to give back (a rejection, an
 * admission without delay, one decided without the store) or the store could not be reached in
 * time: the turn then stays taken, so the limit is never exceeded. Never rejects.
 */
export function cancelling(options: CancelOptions): (decision: Decision, cost: number) => Promise<boolean> {
  const { store, prefix, own, now, timeoutMs, bound, forget } = options;
  return (decision, cost) => {
    if (!decision.allowed || decision.delayMs === 0 || decision.degraded !== undefined || cost === 0)
      return NOTHING;
    const policies = decision.limits?.map((limit) => limit.policy) ?? [decision.policy];
    if (!policies.some((policy) => giveBackOf(policy) !== undefined)) return NOTHING;
    // A decision by other policies than the limiter's own was by a per-key override.
    const scope = policies[0] === own[0] ? undefined : scopeOf(policies);
    const { key } = decision;
    let given: Promise<unknown> | undefined;
    try {
      const request = { prefix, key, cost, nowMs: now(), scope, timeoutMs };
      given =
        policies.length > 1
          ? store.giveBackRules?.({ ...request, policies })
          : store.giveBack?.({ ...request, policy: policies[0] as Policy });
    } catch {
      // A `clock` that broke, or a store that throws instead of rejecting: the turn stays taken.
      // Never thrown: cancel runs in a response's `close` listener, where a throw ends the process.
      return NOTHING;
    }
    if (given === undefined) return NOTHING;
    forget(key);
    return (bound === undefined ? given : bound(given)).then(
      () => true,
      () => false,
    );
  };
}
