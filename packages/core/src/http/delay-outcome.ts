import { refundAll } from '../limiter/refund-all';
import type { Limiter } from '../limiter/create-limiter';
import { SluiceConfigError } from '../policy/config-error';
import type { Decision } from '../types';
import { holdRequest } from './hold-request';
import type { HeaderList, HttpOutcome } from './http-options';

/**
 * The default `maxHeld`: a held request keeps its request and response objects alive, a few kB
 * each (measured: 50 000 pipelined held requests took 323 MB), so 1000 cost a few MB.
 */
export const DEFAULT_MAX_HELD = 1000;

/**
 * How many requests one limit holds right now, against its `maxHeld`: a slot is taken when a
 * request is admitted with a delay, and given back when its hold ends (served, or its client
 * left) or when it is cancelled.
 */
export class HoldSlots {
  #taken = 0;

  /** @param max - the limit's `maxHeld` */
  constructor(readonly max: number) {}

  /** Requests of this limit held right now. */
  get taken(): number {
    return this.#taken;
  }

  /** `true` when one request more would exceed `maxHeld`. */
  get full(): boolean {
    return this.#taken >= this.max;
  }

  /** Takes a slot of each (all checked not `full`); the function returned gives them back, once. */
  static takeAll(slots: readonly HoldSlots[]): () => void {
    for (const each of slots) each.#taken++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      for (const each of slots) each.#taken--;
    };
  }
}

/** Validates `maxHeld`: a whole number >= 0, or `Infinity` (no bound). */
export function resolveMaxHeld(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_HELD;
  if (value === Infinity || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0))
    return value;
  throw new SluiceConfigError('maxHeld', value, 'must be a whole number >= 0, or Infinity (no bound)');
}

/** What one limit answered for a request, as far as holding it goes. */
export interface HeldResult {
  readonly entry: {
    readonly limit: { readonly limiter: Limiter; readonly dryRun: boolean; readonly held: HoldSlots };
    readonly cost: number | undefined;
  };
  readonly decision: Decision;
  /**
   * With several limits on the request: gives back exactly what this one took (see `takeAll`),
   * delayed or not, for a request that will not run.
   */
  readonly refund?: (() => unknown) | undefined;
}

/**
 * Takes a `maxHeld` slot of each limit that delays the request, and returns the function that
 * frees them. When one of those limits is full, nothing is taken, each gets its turn back (the
 * refusal costs no unit), and the full limit's refusal is returned instead: its own rejection,
 * to retry when the request's turn would have come.
 */
export function takeHeldSlots<R extends HeldResult>(
  results: readonly R[],
): { readonly release: () => void } | { readonly refused: { entry: R['entry']; decision: Decision } } {
  const delaying = results.filter(isHeld);
  const full = delaying.find((result) => result.entry.limit.held.full);
  if (full === undefined) return { release: HoldSlots.takeAll(delaying.map((r) => r.entry.limit.held)) };
  cancelAll(results);
  const { decision } = full;
  // `resetMs` still counts the turn given back: an upper bound, as headers may be.
  return {
    refused: {
      entry: full.entry,
      decision: {
        ...decision,
        allowed: false,
        remaining: 0,
        retryAfterMs: decision.delayMs,
        delayMs: 0,
        reason: 'limited',
      },
    },
  };
}

/** The `delay` outcome of a request whose slots `release` frees, once it is held or cancelled. */
export function delayOutcome<THandler>(
  headers: HeaderList,
  delayMs: number,
  results: readonly HeldResult[],
  release: () => void,
): HttpOutcome<THandler> {
  const cancel = (): void => {
    release();
    cancelAll(results);
  };
  return {
    kind: 'delay',
    headers,
    delayMs,
    hold: (response) =>
      holdRequest(delayMs, response, cancel).then((here) => {
        release();
        return here;
      }),
    cancel,
  };
}

/** Whether a limit holds the request: it delayed it, for real (a dry run never delays). */
function isHeld({ entry, decision }: HeldResult): boolean {
  return decision.delayMs > 0 && !entry.limit.dryRun;
}

/**
 * A held request that will not run: every limit gets back what it took — with several limits,
 * each exactly (see `takeAll`: one that admitted without delay too, so that a request that never
 * ran costs a shared limit nothing); alone, or where no exact refund exists, each limit that
 * delayed it gets its turn back (`limiter.cancel`). Never rejects.
 */
function cancelAll(results: readonly HeldResult[]): void {
  const refunds: Array<() => unknown> = [];
  for (const result of results) {
    const { entry, decision, refund } = result;
    if (refund !== undefined) refunds.push(refund);
    else if (isHeld(result))
      void entry.limit.limiter.cancel(decision, entry.cost === undefined ? undefined : { cost: entry.cost });
  }
  if (refunds.length > 0) void refundAll(refunds);
}
