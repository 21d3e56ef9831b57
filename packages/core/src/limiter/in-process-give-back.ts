import type { JointPart, Store } from '../stores/store';
import { giveBackOf } from '../algorithms/give-back';
import type { Decision, Receipt, Verdict } from '../types';
import type { TakeRequest, TakenAll } from './consume-all-types';
import { sideOf, type LimiterSide } from './limiter-side';
import type { ConsumeOptions, Limiter } from './limiter-types';
import { NO_REFUNDS } from './refund-all';

const WRITE = [true];
/** The receipts of an admission by the bucket algorithms, which give back without one (one per rule, at most 16). */
const BUCKET_RECEIPTS: readonly Receipt[] = Array.from({ length: 16 }, () => ({ at: 0, member: 0 }));

/**
 * One in-process limit alone, with its refund: the bucket algorithms (and warm-up) by the
 * limiter's own `consumeSync`, as any decision, since they give back without a receipt; the
 * windows and the sliding log by the store's joint step, which returns their receipts.
 */
export function takeOneSync({
  limiter,
  key,
  cost,
  context,
  dryRun = false,
}: TakeRequest): TakenAll | undefined {
  const side = sideOf(limiter);
  const store = side?.store;
  if (side === undefined || side.remote !== undefined || store?.prepareAllSync === undefined)
    return undefined;
  const { part, target } = side.part(key, cost, context, dryRun);
  const giveBack = store.giveBackTaken;
  if (giveBack !== undefined && target.policies.every((policy) => giveBackOf(policy) !== undefined)) {
    const decision = limiter.consumeSync(key, { cost: part.cost, context });
    if (decision === undefined) return undefined;
    const taken = decision.allowed && decision.degraded === undefined && part.cost > 0;
    return {
      decisions: [decision],
      refunds: taken ? [() => giveBack.call(store, retimed(part, side), BUCKET_RECEIPTS)] : NO_REFUNDS,
    };
  }
  const prepared = store.prepareAllSync([part]);
  const taken = prepared.commit(WRITE)[0];
  const verdicts = taken === undefined ? prepared.unchanged(0) : (prepared.verdicts[0] as Verdict[]);
  const decision = side.decision(verdicts, target, part, undefined);
  if (taken === undefined || giveBack === undefined) return { decisions: [decision], refunds: NO_REFUNDS };
  return { decisions: [decision], refunds: [() => giveBack.call(store, retimed(part, side), taken)] };
}

/**
 * How one in-process limit gives back an admission from its key, cost and context alone, read
 * when the give-back happens: the bucket algorithms (and warm-up) need no receipt, and without
 * `overrides` every key has the limiter's own policies. For the HTTP layer's `countWhen` on such
 * a limit: its admission is the limiter's own `consumeSync`, and nothing is kept per request but
 * the key (no part, receipts nor refund built unless a give-back is needed).
 */
export class KeyedGiveBack {
  readonly #limiter: Limiter;
  readonly #side: LimiterSide;
  readonly #giveBack: NonNullable<Store['giveBackTaken']>;

  private constructor(limiter: Limiter, side: LimiterSide, giveBack: NonNullable<Store['giveBackTaken']>) {
    this.#limiter = limiter;
    this.#side = side;
    this.#giveBack = giveBack;
  }

  /** `undefined` when `limiter` cannot give back so (a remote store, `overrides`, a window or the sliding log). */
  static of(limiter: Limiter): KeyedGiveBack | undefined {
    const side = sideOf(limiter);
    const store = side?.store;
    const giveBack = store?.giveBackTaken;
    if (
      side === undefined ||
      side.remote !== undefined ||
      store?.prepareAllSync === undefined ||
      giveBack === undefined ||
      side.fixed === undefined ||
      !side.fixed.every((policy) => giveBackOf(policy) !== undefined)
    )
      return undefined;
    return new KeyedGiveBack(limiter, side, giveBack);
  }

  /** The limiter's decision, as `consumeSync` gives it (`options` read during the call only). */
  take(key: string, options: ConsumeOptions | undefined): Decision | undefined {
    return this.#limiter.consumeSync(key, options);
  }

  /** Whether `decision`, from {@link KeyedGiveBack.take} at `cost`, took units that can be given back. */
  took(decision: Decision, cost: number | undefined): boolean {
    return decision.allowed && decision.degraded === undefined && (cost ?? this.#side.defaultCost) > 0;
  }

  /** Gives back exactly what `take(key, { cost, context })` took, timed now; never rejects. */
  give(key: string, cost: number | undefined, context: unknown): Promise<unknown> {
    try {
      const { part } = this.#side.part(key, cost, context, false);
      return this.#giveBack.call(this.#side.store, part, BUCKET_RECEIPTS);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/**
 * A part as given back now, on the limiter's clock: a token bucket written since the admission
 * (its refill counted from then) must not count that time again from the admission's.
 */
export function retimed(part: JointPart, side: LimiterSide): JointPart {
  return { ...part, nowMs: side.now() };
}
