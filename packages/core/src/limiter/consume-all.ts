import { SluiceConfigError } from '../policy/config-error';
import type { JointPart, PreparedJoint, Store } from '../stores/store';
import { takeAlone } from '../stores/take-part';
import { giveBackOf } from '../algorithms/give-back';
import type { Decision, Receipt, Verdict } from '../types';
import type { Target } from './decisions';
import { sideOf, type LimiterSide, type RemoteSide, type TakenDecision } from './limiter-side';
import type { ConsumeOptions, Limiter } from './limiter-types';
import { TurnBudget } from './turn-budget';

/** One limit of a request with several ({@link consumeAll}). */
export interface LimitRequest {
  /** A limiter made by `createLimiter`. */
  readonly limiter: Limiter;
  /** The key this limit counts the request under. */
  readonly key: string;
  /** Units the request takes from this limit. @defaultValue the limiter's `cost` */
  readonly cost?: number;
  /** Passed to the limiter's `overrides` function, as in `consume`. */
  readonly context?: unknown;
  /** Count the request here, but never refuse it because of this limit (nginx `limit_req_dry_run`). @defaultValue false */
  readonly dryRun?: boolean;
}

/** A limit of a request as {@link takeAll} takes it: a {@link LimitRequest}, or a probe. */
export interface TakeRequest extends LimitRequest {
  /**
   * Decide the request at its `cost` but take nothing: it is refused as a request of that cost
   * would be, admitted while the units are left (see `JointPart.probe`), and reported like any
   * decision. The HTTP layer asks a request of cost 0 so, at cost 1. @defaultValue false
   */
  readonly probe?: boolean;
}

interface Joint {
  readonly requests: readonly TakeRequest[];
  readonly sides: readonly LimiterSide[];
  readonly parts: readonly JointPart[];
  readonly targets: readonly Target[];
}

/**
 * Decides one request against several limits — say per address, then per SKU — so that no limit
 * loses a unit to a request another refuses: every limit takes its cost, or none does (a dry-run
 * limit is counted with the others but never refuses). Resolves one decision per limit, in
 * order, up to the first refusal by a limit that may refuse: the later ones are `undefined`
 * (not asked, or left out), so every path reports the same refusal, the first in order, as nginx
 * does with several `limit_req`.
 *
 * How, by where the limits keep their state:
 * - **All in process** (memory stores): every limit is checked, then every one is written, in one
 *   synchronous step — nothing can run in between.
 * - **One remote store, one node** (Redis standalone or Sentinel; on Cluster, keys that share
 *   their hash tag): one script call checks every limit, then writes them all, atomically.
 * - **Elsewhere** (Cluster with keys in different slots, limits on different stores, a limiter
 *   with `lease`, a store that just failed or whose circuit is open): the limits are taken in
 *   order, and when one refuses, what the earlier ones took is given back exactly (each window
 *   in the window it counted in, the sliding log's very entries, leased units to their lease).
 *   Until then a concurrent request may see those units taken, and a refund the store fails
 *   (down, slower than `timeoutMs`) is lost: reported as a `storeError`, never retried. The
 *   request waits for its stores one `timeoutMs` in all (the shortest of its limiters'), not one
 *   per limit: a limit whose turn finds that time spent, or whose store does not answer within
 *   what is left, is decided by its `onStoreError`, and what its store takes late is given back.
 *
 * A failure of the store is decided per limit by its `onStoreError`, in order, with the same
 * give-back on the insurance store. A limiter that is not from `createLimiter` is only asked in
 * order, without give-back.
 *
 * @param requests - the limits of the request, in order
 * @throws {@link SluiceConfigError} (as a rejection) when the list, a limiter, a key or a cost is invalid
 * @example
 * ```ts
 * const [perIp, perSku] = await consumeAll([
 *   { limiter: ipLimiter, key: req.ip },
 *   { limiter: skuLimiter, key: `sku:${sku}` },
 * ]);
 * if (!perIp?.allowed || !perSku?.allowed) reply429();
 * ```
 */
export async function consumeAll(requests: readonly LimitRequest[]): Promise<Array<Decision | undefined>> {
  return (await takeAll(requests)).decisions;
}

/** A refund: gives back exactly what one limit's admission took; never rejects. */
type Refund = () => Promise<unknown>;

/** {@link consumeAll}'s decisions, and how to give back what each limit that admitted took. */
export interface TakenAll {
  readonly decisions: Array<Decision | undefined>;
  /**
   * Per limit, in order: gives back exactly what its admission took (each window in the window
   * it counted in, the sliding log's very entries, leased units to their lease), for a request
   * that was admitted but will not run (a held request whose client left); `undefined` where
   * nothing was taken or nothing can be given back exactly (then `limiter.cancel` still gives
   * back a delayed turn). A refund the store fails is reported as a `storeError` and lost.
   */
  readonly refunds: ReadonlyArray<Refund | undefined>;
}

/**
 * {@link consumeAll}, with the refunds of what each limit took: for the HTTP layer, whose held
 * requests may end before they run.
 */
export async function takeAll(requests: readonly TakeRequest[], exact = false): Promise<TakenAll> {
  checkRequests(requests);
  const sides = requests.map(({ limiter }) => sideOf(limiter));
  // A probe needs a store that can decide without writing; a limiter not from createLimiter is
  // asked at the probe's cost (taking it: never a unit given away). One limit alone is one
  // `consume`, without refunds, unless they are asked for (`exact`).
  const alone = !exact && requests.length === 1 && requests[0]?.probe !== true;
  if (alone || !sides.every((side): side is LimiterSide => side !== undefined))
    return { decisions: await inOrder(requests), refunds: NO_REFUNDS };
  const joint = jointOf(requests, sides as LimiterSide[]);
  if (inProcessSides(sides as LimiterSide[])) return inProcess(joint);
  const { parts } = joint;
  // No block cache in front of a joint decision: a refusal it remembers would stand for the
  // others' checks, and a request refused there would be decided differently than in memory
  // (measured: the flash-sale replay placed 2 more orders on Redis). Each limit taken alone
  // (below) still meets its block cache first.
  const store = (sides[0] as LimiterSide).store;
  // One limit alone (a probe): taken alone, its block cache first, as `consume` would be.
  const together =
    parts.length > 1 &&
    store.consumeAll !== undefined &&
    sides.every(
      ({ remote, store: own }, i) =>
        own === store && remote?.joinable === true && remote.guard.closed((parts[i] as JointPart).key),
    ) &&
    store.canJoin?.(parts) === true;
  if (together) return inOneCall(joint, store);
  // One timeout in all for the turns (the shortest of the remote limiters'), counted from now.
  // One part alone (`exact`) has its own: its store call is bounded by its `timeoutMs` as `consume` is.
  const timeouts = sides.flatMap(({ remote }) => (remote === undefined ? [] : [remote.timeoutMs]));
  const budget =
    timeouts.length === 0 || parts.length === 1 ? undefined : new TurnBudget(Math.min(...timeouts));
  return inTurn(joint, (i) => takeOne(joint, i, budget), budget);
}

/**
 * {@link takeAll} with its refunds (`exact`), synchronously, when every limit keeps its state in
 * process (memory stores); `undefined` otherwise, nothing taken: use `takeAll`. The HTTP layer's
 * path for a limit whose units may be given back after the response (`countWhen`).
 */
export function takeAllSync(requests: readonly TakeRequest[]): TakenAll | undefined {
  if (requests.length === 1) return takeOneSync(requests[0] as TakeRequest);
  const sides = requests.map(({ limiter }) => sideOf(limiter));
  if (!sides.every((side): side is LimiterSide => side !== undefined) || !inProcessSides(sides))
    return undefined;
  return inProcess(jointOf(requests, sides));
}

const WRITE = [true];
/** The receipts of an admission by the bucket algorithms, which give back without one (one per rule, at most 16). */
const BUCKET_RECEIPTS: readonly Receipt[] = Array.from({ length: 16 }, () => ({ at: 0, member: 0 }));

/**
 * One in-process limit alone, with its refund: the bucket algorithms (and warm-up) by the
 * limiter's own `consumeSync`, as any decision, since they give back without a receipt; the
 * windows and the sliding log by the store's joint step, which returns their receipts.
 */
function takeOneSync({ limiter, key, cost, context, dryRun = false }: TakeRequest): TakenAll | undefined {
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
function retimed(part: JointPart, side: LimiterSide): JointPart {
  return { ...part, nowMs: side.now() };
}

/** Whether every side decides in process, in one synchronous step with the others. */
function inProcessSides(sides: readonly LimiterSide[]): boolean {
  return sides.every(({ remote, store }) => remote === undefined && store.prepareAllSync !== undefined);
}

/** The requests as parts of one joint decision, each with its target (its key's policies). */
function jointOf(requests: readonly TakeRequest[], sides: readonly LimiterSide[]): Joint {
  const parts: JointPart[] = [];
  const targets: Target[] = [];
  requests.forEach(({ key, cost, context, dryRun = false, probe }, i) => {
    const { part, target } = (sides[i] as LimiterSide).part(key, cost, context, dryRun);
    parts.push(probe === true ? { ...part, probe } : part);
    targets.push(target);
  });
  return { requests, sides, parts, targets };
}

/** `consumeAll`'s list, checked: each entry a limit with a limiter. */
function checkRequests(requests: unknown): void {
  if (!Array.isArray(requests)) {
    throw new SluiceConfigError(
      'requests',
      requests,
      'expected a list of { limiter, key, cost?, context?, dryRun? }',
      'SLUICE_INVALID_ARGUMENT',
    );
  }
  requests.forEach((request: unknown, i) => {
    const limiter = (request as { limiter?: unknown } | null)?.limiter;
    if (typeof (limiter as { consume?: unknown } | null | undefined)?.consume !== 'function') {
      throw new SluiceConfigError(
        `requests[${i}].limiter`,
        limiter,
        'expected a limiter from createLimiter()',
        'SLUICE_INVALID_ARGUMENT',
      );
    }
  });
}

/** Every part checked, then every admitted part written, in one synchronous step. */
function inProcess({ sides, parts, targets }: Joint): TakenAll {
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

/**
 * The decisions in order up to the first refusal by a limit that may refuse, as nginx reports
 * several `limit_req`: the later limits are left out (`undefined`), whatever they would say, so
 * every path reports the same refusal.
 */
function untilRefused(
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

/** One script call for every part; when it fails, each limit is decided by its `onStoreError`. */
async function inOneCall(joint: Joint, store: Store): Promise<TakenAll> {
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

/**
 * Part `i` alone: through its remote path, within the time `budget` leaves (see
 * {@link TurnBudget}), or its in-process store with its receipts.
 */
async function takeOne(
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

const DONE = Promise.resolve();

/** What a part's store took after its turn was decided without it: given back. */
function refundLate({ decision, giveBack }: TakenDecision): void {
  if (decision.allowed && giveBack !== undefined) void refundAll([giveBack]);
}

/**
 * The parts in order: when an enforcing part refuses, the later ones are not asked and what the
 * earlier ones took is given back, before the decisions resolve (waited for within `budget`:
 * past it, the give-backs go on without the request).
 */
async function inTurn(
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

const NO_REFUNDS: ReadonlyArray<Refund | undefined> = [];

/** Limiters not made by `createLimiter`: asked in order, stopping at the first refusal. */
async function inOrder(requests: readonly LimitRequest[]): Promise<Array<Decision | undefined>> {
  const decisions: Array<Decision | undefined> = requests.map(() => undefined);
  for (let i = 0; i < requests.length; i++) {
    const { limiter, key, cost, context, dryRun } = requests[i] as LimitRequest;
    const decision = await limiter.consume(key, { cost, context });
    decisions[i] = decision;
    if (!decision.allowed && dryRun !== true) break;
  }
  return decisions;
}
