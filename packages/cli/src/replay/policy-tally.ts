import type { Decision } from '@sluice/core';
import { Series } from './series';
import { TopKeys } from './top-keys';

/** The second (by arrival) in which a policy refused the most requests. */
export interface WorstSecond {
  /** Its start, epoch ms. */
  readonly startMs: number;
  readonly requests: number;
  readonly admitted: number;
  readonly delayed: number;
  readonly limited: number;
}

/** Keys followed for "the keys limited most": Space-Saving's guarantee covers any key over 1/256 of the refusals. */
const LIMITED_KEYS_FOLLOWED = 256;

/**
 * What one candidate policy did with the replayed requests: counts, the worst second, the keys
 * it refused most, and the requests over time for the charts. Memory is bounded: the series
 * widen their buckets, the keys are a fixed-size summary.
 */
export class PolicyTally {
  admitted = 0;
  /** Admitted, but held for `delayMs` first (leaky bucket without `nodelay`, `queue`, `warmup`). */
  delayed = 0;
  limited = 0;
  /** Longest delay given, ms. */
  maxDelayMs = 0;
  /** Requests by outcome over time; a delayed request counts when it is let through. */
  readonly series = new Series();
  readonly limitedKeys = new TopKeys<undefined>(LIMITED_KEYS_FOLLOWED, () => undefined);
  #worst: WorstSecond | undefined;
  #second = Number.NEGATIVE_INFINITY;
  #secondAdmitted = 0;
  #secondDelayed = 0;
  #secondLimited = 0;

  /**
   * Counts one decision.
   * @param timeMs - the request's arrival (epoch ms, never earlier than the last one)
   * @param keySeries - the key's own series when the key is among the hottest followed, else `undefined`
   */
  record(timeMs: number, decision: Decision, keySeries: Series | undefined): void {
    const second = Math.floor(timeMs / 1000);
    if (second !== this.#second) this.#closeSecond(second);
    let outcome: number;
    let at = timeMs;
    if (!decision.allowed) {
      outcome = 2;
      this.limited++;
      this.#secondLimited++;
      this.limitedKeys.add(decision.key);
    } else if (decision.delayMs > 0) {
      outcome = 1;
      at = timeMs + decision.delayMs;
      this.delayed++;
      this.#secondDelayed++;
      if (decision.delayMs > this.maxDelayMs) this.maxDelayMs = decision.delayMs;
    } else {
      outcome = 0;
      this.admitted++;
      this.#secondAdmitted++;
    }
    this.series.add(outcome, at);
    keySeries?.add(outcome, at);
  }

  /** The second with the most refusals (the earliest of equals); `undefined` when none was refused. */
  worstSecond(): WorstSecond | undefined {
    this.#closeSecond(Number.NEGATIVE_INFINITY);
    return this.#worst;
  }

  #closeSecond(next: number): void {
    if (this.#secondLimited > (this.#worst?.limited ?? 0)) {
      this.#worst = {
        startMs: this.#second * 1000,
        requests: this.#secondAdmitted + this.#secondDelayed + this.#secondLimited,
        admitted: this.#secondAdmitted,
        delayed: this.#secondDelayed,
        limited: this.#secondLimited,
      };
    }
    this.#second = next;
    this.#secondAdmitted = 0;
    this.#secondDelayed = 0;
    this.#secondLimited = 0;
  }
}
