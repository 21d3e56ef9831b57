import { takeAll } from '../limiter/consume-all';
import type { Decision } from '../types';
import { once, type OnceRefund } from './count-when';
import type { ReplyCache } from './reply-cache';
import type { ResolvedLimit } from './resolve-http-options';

/** One limit taking part in a request. */
export interface Entry<TRequest, THandler> {
  readonly limit: ResolvedLimit<TRequest, THandler>;
  /** The limit's answers, remembered between requests. */
  readonly replies: ReplyCache;
  readonly key: string;
  readonly cost: number | undefined;
}

/** One limit's decision for a request. */
export interface Result<TRequest, THandler> {
  readonly entry: Entry<TRequest, THandler>;
  readonly decision: Decision;
  /**
   * Gives back exactly what the limit took, when the request has several or a limit has
   * `countWhen` (see `takeAll`): then once only, however many paths call it.
   */
  readonly refund?: OnceRefund | (() => Promise<unknown>) | undefined;
}

function consume<TRequest, THandler>(entry: Entry<TRequest, THandler>, request: TRequest): Promise<Decision> {
  const { limit, key, cost } = entry;
  if (limit.passRequest) return limit.limiter.consume(key, { cost, context: request });
  return limit.limiter.consume(key, cost === undefined ? undefined : { cost });
}

/**
 * The entries' decisions. A request of cost 0 still needs a unit left: it is a probe at cost 1,
 * refused as a request of cost 1 would be and taking nothing (`limiter.consume` at cost 0 only
 * looks, as redis-cell's quantity 0 does: it would let a spent key pass, unreported). It is
 * reported to the limiter's metrics as any decision.
 */
export async function decideAll<TRequest, THandler>(
  entries: Array<Entry<TRequest, THandler>>,
  request: TRequest,
): Promise<Array<Result<TRequest, THandler>>> {
  if (entries.length === 0) return [];
  const entry = entries[0] as Entry<TRequest, THandler>;
  // A limit with `countWhen` needs its refund, even alone: then every refund runs once only.
  const exact = entries.some(({ limit }) => limit.countWhen !== undefined);
  if (entries.length === 1 && entry.cost !== 0 && !exact)
    return [{ entry, decision: await consume(entry, request) }];
  // Every limit takes its cost or none does (see `consumeAll`); a limit not asked has no result.
  // A held request that will not run gives back what every limit took (see `delayOutcome`).
  const { decisions, refunds } = await takeAll(
    entries.map(({ limit, key, cost }) => ({
      limiter: limit.limiter,
      key,
      cost: cost === 0 ? 1 : cost,
      context: limit.passRequest ? request : undefined,
      dryRun: limit.dryRun,
      probe: cost === 0,
    })),
    exact,
  );
  const results: Array<Result<TRequest, THandler>> = [];
  decisions.forEach((decision, i) => {
    const given = refunds[i];
    const refund = exact && given !== undefined ? once(given) : given;
    if (decision !== undefined)
      results.push({ entry: entries[i] as Entry<TRequest, THandler>, decision, refund });
  });
  return results;
}
