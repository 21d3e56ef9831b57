import type { LogTime } from './log-time';

/** Receives the requests of a replay in time order. */
export interface RequestSink {
  /**
   * One request.
   * @param timeMs - epoch ms, never less than the previous request's
   * @param key - the limiter key; `''` when the line had none (nginx does not limit an empty key)
   */
  request(timeMs: number, key: string): void;
}

/**
 * Puts log entries in time order for the limiters, which need a clock that does not go back.
 *
 * - **Whole seconds** (`$time_local`, the usual case): a log that says 40 requests came in
 *   12:00:07 does not say when within it. Replaying all 40 at 12:00:07.000 would judge them as
 *   one burst, so with `spread` the requests of each second are spaced evenly across it
 *   (`12:00:07.000`, `.025`, `.050` …). This holds one second of keys at a time.
 * - **Out of order**: logs are written when responses end, and several workers or servers
 *   interleave, so a line can be a little earlier than the one before it. It is replayed at the
 *   latest time seen (or within the second being spread) and counted in {@link outOfOrder}.
 */
export class Sequencer {
  /** Entries replayed later than their own time because an earlier line was later. */
  outOfOrder = 0;
  readonly #sink: RequestSink;
  readonly #spread: boolean;
  #second = Number.NEGATIVE_INFINITY;
  #keys: string[] = [];
  #last = Number.NEGATIVE_INFINITY;

  /**
   * @param sink - where the ordered requests go
   * @param spread - space the requests of a whole second evenly across it (else all at its start)
   */
  constructor(sink: RequestSink, spread: boolean) {
    this.#sink = sink;
    this.#spread = spread;
  }

  /** One entry, as read. */
  push(time: LogTime, key: string): void {
    if (time.wholeSeconds && this.#spread) {
      const second = Math.floor(time.ms / 1000);
      if (second > this.#second) {
        this.flush();
        this.#second = second;
      } else if (second < this.#second) {
        this.outOfOrder++;
      }
      this.#keys.push(key);
      return;
    }
    this.flush();
    let timeMs = time.ms;
    if (timeMs < this.#last) {
      this.outOfOrder++;
      timeMs = this.#last;
    }
    this.#last = timeMs;
    this.#sink.request(timeMs, key);
  }

  /** Sends the second being spread; call once more at the end of the log. */
  flush(): void {
    const keys = this.#keys;
    const count = keys.length;
    if (count === 0) return;
    const start = this.#second * 1000;
    for (let i = 0; i < count; i++) {
      const timeMs = Math.max(start + Math.floor((i * 1000) / count), this.#last);
      this.#last = timeMs;
      this.#sink.request(timeMs, keys[i] as string);
    }
    this.#keys = [];
  }
}
