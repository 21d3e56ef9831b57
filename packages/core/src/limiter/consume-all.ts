import { SluiceConfigError } from '../policy/config-error';
import type { JointPart } from '../stores/store';
import type { Decision } from '../types';
import type { LimitRequest, TakeRequest, TakenAll } from './consume-all-types';
import { takeOneSync } from './in-process-give-back';
import { inOneCall } from './in-one-call';
import { inProcess } from './in-process';
import { inTurn, takeOne } from './in-turn';
import { inProcessSides, jointOf } from './joint';
import { sideOf, type LimiterSide } from './limiter-side';
import { NO_REFUNDS } from './refund-all';
import { TurnBudget } from './turn-budget';

export type { LimitRequest } from './consume-all-types';

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
