import type { KeyedGiveBack } from '../limiter/in-process-give-back';
import { sideOf } from '../limiter/limiter-side';
import type { Limiter } from '../limiter/create-limiter';
import { SluiceConfigError } from '../policy/config-error';
import { FetchExchange } from './fetch-exchange';
import type { CallbackErrorEvent } from './http-options';
import { watchClose, type CloseWatcher, type ListenableResponse } from './response-close';
import { reportFailure } from './user-callbacks';

/**
 * What a response tells when it is done: Node's `ServerResponse` (`statusCode`,
 * `writableFinished`), or a `FetchExchange`, which says the same of a Fetch handler's `Response`.
 */
export type CountedResponse = ListenableResponse & {
  readonly statusCode?: number;
  readonly writableFinished?: boolean;
  /** A `FetchExchange`'s `Response`: what a `countWhen` function gets on a Fetch handler. */
  readonly response?: unknown;
};

/** Whether a finished response counts: `counted(request, response, raw)`, read once the response is done. */
export type Counts = (request: unknown, response: unknown, raw: CountedResponse) => boolean;

/** A response that never finished (the client left, the handler threw) failed, whatever its status says. */
const failed = (raw: CountedResponse): boolean =>
  raw.writableFinished !== true || (raw.statusCode ?? 500) >= 400;
const FAILED: Counts = (_request, _response, raw) => failed(raw);
const SUCCEEDED: Counts = (_request, _response, raw) => !failed(raw);

const ACCEPTED = "expected 'failed', 'succeeded' or a function (request, response) => boolean";

/**
 * Validates `countWhen` once, at creation, with the limit's limiter: its units must be givable
 * back exactly (a limiter from `createLimiter` on a store with `giveBackTaken`, as MemoryStore and
 * RedisStore have).
 *
 * @param value - the option as given
 * @param limiter - the limit's limiter
 * @param onCallbackError - where a function that throws is reported (the response then counts)
 * @returns `undefined` without the option
 * @throws {@link SluiceConfigError} naming `countWhen`
 */
export function resolveCountWhen<TRequest>(
  value: unknown,
  limiter: Limiter,
  onCallbackError: ((event: CallbackErrorEvent<TRequest>) => void) | undefined,
): Counts | undefined {
  if (value === undefined) return undefined;
  let counts: Counts;
  if (value === 'failed') counts = FAILED;
  else if (value === 'succeeded') counts = SUCCEEDED;
  else if (typeof value === 'function') {
    const fn = value as (request: unknown, response: unknown) => unknown;
    counts = (request, response) => {
      try {
        return fn(request, response) !== false;
      } catch (threw) {
        // Counted: a broken function never gives units away.
        reportFailure({ onCallbackError }, request as TRequest, 'countWhen', { threw });
        return true;
      }
    };
  } else throw new SluiceConfigError('countWhen', value, ACCEPTED);
  const { store } = limiter;
  if (
    sideOf(limiter) === undefined ||
    store.giveBackTaken === undefined ||
    (store.consumeAll === undefined && store.prepareAllSync === undefined)
  ) {
    throw new SluiceConfigError(
      'countWhen',
      value,
      'needs a limiter from createLimiter() on a store that gives back exactly (MemoryStore, RedisStore: giveBackTaken with consumeAll or prepareAllSync)',
    );
  }
  return counts;
}

/**
 * Gives back what an admitted request took when its response does not count: watches the
 * response until it is done (sent, or its connection closed), then asks `counts`. `refund` runs
 * at most once (see {@link once}): a held request whose client left may have given its turn back
 * already, and then nothing more is given back nor reported.
 *
 * @param raw - Node's response, or a `FetchExchange`; without one nothing is watched (the units stay taken)
 * @param request - the framework's request
 * @param response - the framework's response, for a function (a `FetchExchange`'s `Response` when it is one)
 * @param counts - the limit's resolved `countWhen`
 * @param refund - gives back exactly what the request took
 * @param limiter - reports the give-back to its `metrics`
 */
export function refundUncounted(
  raw: CountedResponse | undefined,
  request: unknown,
  response: unknown,
  counts: Counts,
  refund: OnceRefund,
  limiter: Limiter,
): void {
  if (raw === undefined) return;
  watchClose(
    raw,
    new CountWatch(raw, request, response, counts, limiter, refund, undefined, '', undefined, false),
  );
}

/**
 * One admitted request watched for `countWhen`: the one object kept until its response is done
 * (see {@link watchClose}), which gives back what the request took, once, when the response does
 * not count. It gives back by its `refund`, or by `keyed` from its key, cost and context (an
 * in-process bucket limit: nothing built unless a give-back is needed).
 */
export class CountWatch implements CloseWatcher {
  #given = false;

  /**
   * @param raw - Node's response, or a `FetchExchange` (`undefined`: never watched, given back by a held request only)
   * @param request - the framework's request
   * @param response - the framework's response, for a function
   * @param counts - the limit's resolved `countWhen`
   * @param limiter - reports the give-back to its `metrics`
   * @param refund - gives back exactly what the request took; or, `undefined`:
   * @param keyed - gives back `cost` under `key` (the request its context when `passRequest`), as it was taken
   */
  constructor(
    readonly raw: CountedResponse | undefined,
    readonly request: unknown,
    readonly response: unknown,
    readonly counts: Counts,
    readonly limiter: Limiter,
    readonly refund: OnceRefund | undefined,
    readonly keyed: KeyedGiveBack | undefined,
    readonly key: string,
    readonly cost: number | undefined,
    readonly passRequest: boolean,
  ) {}

  /** The response is done: what the request took goes back unless it counts. */
  closed(): void {
    const { raw, response } = this;
    const seen = response instanceof FetchExchange ? response.response : (response ?? raw);
    if (this.counts(this.request, seen, raw as CountedResponse)) return;
    if (this.giveBack() !== undefined) sideOf(this.limiter)?.metrics?.refunded?.();
  }

  /** Gives back what the request took, the first time only (`undefined` after). */
  giveBack(): Promise<unknown> | undefined {
    if (this.#given) return undefined;
    this.#given = true;
    if (this.refund !== undefined) return this.refund();
    return this.keyed?.give(this.key, this.cost, this.passRequest ? this.request : undefined);
  }
}

/** A refund that runs once, however many paths call it; `undefined` from the calls after the first. */
export type OnceRefund = () => Promise<unknown> | undefined;

/** `refund` that runs once (a held client that left gives back, then its response closes). */
export function once(refund: () => Promise<unknown>): OnceRefund {
  let given = false;
  return () => {
    if (given) return undefined;
    given = true;
    return refund();
  };
}
