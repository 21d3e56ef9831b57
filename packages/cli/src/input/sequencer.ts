import type { LogEntry } from './log-formats';
import type { LogTime } from './log-time';

/** How far ahead of the lines before it a line's time may be before it is suspected of being bad. */
export const JUMP_MS = 60_000;

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
 * - **A bad time**: one line more than {@link JUMP_MS} ahead of the latest time, followed by a
 *   line as far behind it, is a corrupt time (a year 275 000 is still a date), not a gap in the
 *   log: it is left out and told to `dropped`, rather than replaying every later line at its
 *   time. A line that far ahead is held until the next one says which it is; the log's last
 *   line has no next, and is kept. The first line has no line before it: it is left out when
 *   the two lines after it are both that far behind it (one line far behind could be the bad
 *   one, replayed at the latest time as any line out of order); a log of two lines keeps both.
 */
export class Sequencer {
  /** Entries replayed later than their own time because an earlier line was later. */
  outOfOrder = 0;
  readonly #sink: RequestSink;
  readonly #spread: boolean;
  readonly #dropped: () => void;
  /** The latest time of an entry taken. */
  #latest = Number.NEGATIVE_INFINITY;
  /**
   * An entry far ahead of the latest, until the next one says whether its time is bad; or the
   * first entry, until the next one (or the two after it) do.
   */
  #held: LogEntry | undefined;
  /** The entry after the first when it is far behind it, until the next says which is bad. */
  #behind: LogEntry | undefined;
  #second = Number.NEGATIVE_INFINITY;
  #keys: string[] = [];
  #last = Number.NEGATIVE_INFINITY;

  /**
   * @param sink - where the ordered requests go
   * @param spread - space the requests of a whole second evenly across it (else all at its start)
   * @param dropped - told when the entry last held (see {@link Sequencer.push}) is left out as a bad time
   */
  constructor(sink: RequestSink, spread: boolean, dropped: () => void = () => undefined) {
    this.#sink = sink;
    this.#spread = spread;
    this.#dropped = dropped;
  }

  /**
   * One entry, as read.
   * @returns `true` when it is held (far ahead of the lines before it, or the first), to be taken
   *   or dropped once the next entries come (or at {@link Sequencer.end})
   */
  push(time: LogTime, key: string): boolean {
    const held = this.#held;
    if (held !== undefined) {
      const far = time.ms <= held.time.ms - JUMP_MS;
      if (this.#latest === Number.NEGATIVE_INFINITY) {
        // The first entry: one line far behind it could be the bad one; two say it is.
        const behind = this.#behind;
        if (behind === undefined && far) {
          this.#behind = { time, key };
          return false;
        }
        this.#held = this.#behind = undefined;
        if (behind !== undefined && far) this.#dropped();
        else this.#take(held.time, held.key);
        if (behind !== undefined) this.#take(behind.time, behind.key);
      } else {
        this.#held = undefined;
        if (far) this.#dropped();
        else this.#take(held.time, held.key);
      }
    }
    if (this.#latest === Number.NEGATIVE_INFINITY || time.ms > this.#latest + JUMP_MS) {
      this.#held = { time, key };
      return true;
    }
    this.#take(time, key);
    return false;
  }

  /** The end of the log: takes the entries still held, and sends the second being spread. */
  end(): void {
    const held = this.#held;
    const behind = this.#behind;
    this.#held = this.#behind = undefined;
    if (held !== undefined) this.#take(held.time, held.key);
    if (behind !== undefined) this.#take(behind.time, behind.key);
    this.#flush();
  }

  #take(time: LogTime, key: string): void {
    if (time.ms > this.#latest) this.#latest = time.ms;
    if (time.wholeSeconds && this.#spread) {
      const second = Math.floor(time.ms / 1000);
      if (second > this.#second) {
        this.#flush();
        this.#second = second;
      } else if (second < this.#second) {
        this.outOfOrder++;
      }
      this.#keys.push(key);
      return;
    }
    this.#flush();
    let timeMs = time.ms;
    if (timeMs < this.#last) {
      this.outOfOrder++;
      timeMs = this.#last;
    }
    this.#last = timeMs;
    this.#sink.request(timeMs, key);
  }

  /** Sends the second being spread. */
  #flush(): void {
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
