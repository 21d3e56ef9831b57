import type { RequestSink } from '../input/sequencer';
import type { Candidate } from './policy-spec';
import { PolicyTally } from './policy-tally';
import { Series } from './series';
import { TopKeys } from './top-keys';

/** The replay's time, epoch ms, which every candidate's limiter reads as its `clock`. */
export interface ReplayClock {
  nowMs: number;
}

/** Hottest keys followed, each with its own series per policy (the charts show the first few). */
const HOT_KEYS_FOLLOWED = 32;

/**
 * Drives every candidate with each request: sets the shared clock to the request's time and
 * asks each limiter synchronously (`consumeSync`, the memory store's path), so a replay runs
 * as fast as the core decides.
 */
export class Replayer implements RequestSink {
  /** Requests seen, with or without a key. */
  requests = 0;
  /** Requests whose key was empty: nginx does not limit them, and neither does sluice by default. */
  noKey = 0;
  firstMs: number | undefined;
  lastMs: number | undefined;
  readonly candidates: readonly Candidate[];
  readonly tallies: readonly PolicyTally[];
  /** The keys with the most requests, each with one series per candidate. */
  readonly hotKeys: TopKeys<Series[]>;

  readonly #clock: ReplayClock;

  /**
   * @param candidates - the limiters to replay through
   * @param clock - the time their limiters read (`clock: () => replayClock.nowMs`)
   */
  constructor(candidates: readonly Candidate[], clock: ReplayClock) {
    this.candidates = candidates;
    this.#clock = clock;
    this.tallies = candidates.map(() => new PolicyTally());
    this.hotKeys = new TopKeys(HOT_KEYS_FOLLOWED, (_key, previous) => {
      if (previous === undefined) return candidates.map(() => new Series());
      for (const series of previous) series.clear();
      return previous;
    });
  }

  request(timeMs: number, key: string): void {
    this.requests++;
    this.firstMs ??= timeMs;
    this.lastMs = timeMs;
    if (key === '') {
      this.noKey++;
      return;
    }
    this.#clock.nowMs = timeMs;
    const keySeries = this.hotKeys.add(key);
    const { candidates, tallies } = this;
    for (let i = 0; i < candidates.length; i++) {
      const decision = (candidates[i] as Candidate).limiter.consumeSync(key);
      // A MemoryStore decides in process: consumeSync never returns undefined here.
      if (decision !== undefined) (tallies[i] as PolicyTally).record(timeMs, decision, keySeries[i]);
    }
  }
}
