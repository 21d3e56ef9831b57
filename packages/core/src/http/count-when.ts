import { sideOf } from '../limiter/limiter-side';
import type { Limiter } from '../limiter/create-limiter';
import { SluiceConfigError } from '../policy/config-error';
import { FetchExchange } from './fetch-exchange';
import type { CallbackErrorEvent } from './http-options';
import { onResponseClose, type ListenableResponse } from './response-close';
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
  onResponseClose(raw, () => {
    const seen = response instanceof FetchExchange ? response.response : (response ?? raw);
    if (counts(request, seen, raw)) return;
    if (refund() !== undefined) sideOf(limiter)?.metrics?.refunded?.();
  });
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
