import type { Policy } from '@sluice/core';
import { ReplayInputError } from '../errors';
import type { LogFormat } from '../input/log-formats';
import { readLog, type LineError, type LogInput, type LogRead } from '../input/read-log';
import {
  checkPatternSize,
  generatePattern,
  type PatternName,
  type PatternOptions,
} from '../patterns/patterns';
import { createCandidate } from './policy-spec';
import type { WorstSecond } from './policy-tally';
import { Replayer, type ReplayClock } from './replayer';
import type { Series } from './series';

/** Replay generated traffic. */
export interface PatternInput extends Partial<Omit<PatternOptions, 'name'>> {
  readonly kind: 'pattern';
  readonly name: PatternName;
}

export type { LineError, LogInput } from '../input/read-log';
export { MAX_LINE_ERRORS } from '../input/read-log';

/** Options of {@link replay}. */
export interface ReplayOptions {
  readonly input: LogInput | PatternInput;
  /** Candidate policies as written on the command line (`'gcra 10r/s burst=20'`); at least one. */
  readonly policies: readonly string[];
  /** Each candidate's `MemoryStore` bound. @defaultValue 100 000 (the store's own default) */
  readonly maxKeys?: number;
}

/** What one candidate did. */
export interface PolicyResult {
  /** The `--policy` text. */
  readonly label: string;
  /** The normalized policies the core made of it (one per rate). */
  readonly policies: readonly Policy[];
  readonly admitted: number;
  readonly delayed: number;
  readonly limited: number;
  /** Longest delay of a delayed request, ms. */
  readonly maxDelayMs: number;
  /** The second with the most refusals; `undefined` when nothing was refused. */
  readonly worstSecond: WorstSecond | undefined;
  /** The keys refused most, most first; `error` > 0 when `limited` may be up to that much too high. */
  readonly limitedKeys: ReadonlyArray<{ key: string; limited: number; error: number }>;
  /**
   * Keys its store forgot to make room while their state was still live (each then started
   * afresh, as in a server with that bound): 0 when it filled up only with expired keys' slots,
   * or never had to make room (`MemoryStore.forgotten`).
   */
  readonly forgotten: number;
  /** Keys held by its store at the end (expired ones included until their slot is reused), and its bound. */
  readonly keysHeld: number;
  readonly maxKeys: number;
  /** Requests by outcome over time. */
  readonly series: Series;
}

/** The result of {@link replay}. */
export interface ReplayResult {
  /** What was replayed, in words (`access.log (combined, key $remote_addr)`). */
  readonly source: string;
  /** The log's format; `undefined` for a pattern. */
  readonly format: LogFormat | undefined;
  /** Lines read (a pattern: 0). */
  readonly lines: number;
  /** Requests replayed, with and without a key. */
  readonly requests: number;
  /** Requests with an empty key: not limited (nginx does the same). */
  readonly noKey: number;
  /** Log entries earlier than the line before them, replayed at that line's time. */
  readonly outOfOrder: number;
  readonly firstMs: number | undefined;
  readonly lastMs: number | undefined;
  /** Lines that did not parse, and the first {@link MAX_LINE_ERRORS} of them. */
  readonly unparsed: number;
  readonly lineErrors: readonly LineError[];
  readonly policies: readonly PolicyResult[];
  /** The keys with the most requests, most first, with one series per policy. */
  readonly hotKeys: ReadonlyArray<{
    key: string;
    requests: number;
    error: number;
    series: readonly Series[];
  }>;
  /** Wall time of the replay, ms. */
  readonly elapsedMs: number;
}

/** Keys the result lists: per policy the keys limited most, and the hottest keys. */
const KEYS_LISTED = 10;

/**
 * Replays a log or a generated pattern through each candidate policy with the real core:
 * one limiter per policy (`createLimiter`, a `MemoryStore` bounded by `maxKeys`, a clock set to
 * each request's time), asked in time order. The log is streamed: memory is the stores', the
 * summaries' and one second of keys, never the log's.
 *
 * @throws {@link ReplayInputError} for input that cannot be replayed at all: no policy, an
 *   invalid policy (the core's message), an unreadable file, an unknown format, a bad key
 * @example
 * ```ts
 * const result = await replay({ input: { kind: 'log', path: 'access.log', key: '$remote_addr' }, policies: ['gcra 10r/s burst=20'] });
 * console.log(result.policies[0]?.limited);
 * ```
 */
export async function replay(options: ReplayOptions): Promise<ReplayResult> {
  const started = performance.now();
  if (options.policies.length === 0)
    throw new ReplayInputError('give at least one --policy, e.g. --policy "gcra 10r/s burst=20"');
  const maxKeys = options.maxKeys ?? 100_000;
  const clock: ReplayClock = { nowMs: 0 };
  const candidates = options.policies.map((spec) =>
    createCandidate(spec, { maxKeys, clock: () => clock.nowMs }),
  );
  const replayer = new Replayer(candidates, clock);
  const { input } = options;
  let read: LogRead;
  if (input.kind === 'pattern') {
    const pattern: PatternOptions = {
      name: input.name,
      durationMs: input.durationMs ?? 60_000,
      rps: input.rps ?? 10,
      keys: input.keys ?? 1,
      windowMs: input.windowMs ?? (candidates[0]?.limiter.policy.windowMs as number),
      seed: input.seed ?? 1,
    };
    checkPatternSize(pattern);
    generatePattern(pattern, replayer);
    read = {
      source: describePattern(pattern),
      format: undefined,
      lines: 0,
      unparsed: 0,
      lineErrors: [],
      outOfOrder: 0,
    };
  } else {
    read = await readLog(input, replayer);
  }
  const elapsedMs = performance.now() - started;
  return {
    ...read,
    requests: replayer.requests,
    noKey: replayer.noKey,
    firstMs: replayer.firstMs,
    lastMs: replayer.lastMs,
    policies: candidates.map((candidate, i) => {
      const tally = replayer.tallies[i] as (typeof replayer.tallies)[number];
      return {
        label: candidate.label,
        policies: candidate.limiter.policies,
        admitted: tally.admitted,
        delayed: tally.delayed,
        limited: tally.limited,
        maxDelayMs: tally.maxDelayMs,
        worstSecond: tally.worstSecond(),
        limitedKeys: tally.limitedKeys
          .top(KEYS_LISTED)
          .map(({ key, count, error }) => ({ key, limited: count, error })),
        forgotten: candidate.store.forgotten,
        keysHeld: candidate.store.size,
        maxKeys,
        series: tally.series,
      };
    }),
    hotKeys: replayer.hotKeys
      .top(KEYS_LISTED)
      .map(({ key, count, error, data }) => ({ key, requests: count, error, series: data })),
    elapsedMs,
  };
}

function describePattern({ name, durationMs, rps, keys, windowMs }: PatternOptions): string {
  const window = name === 'boundary' ? `, window ${windowMs / 1000} s` : '';
  return `pattern ${name}: ${keys} key${keys === 1 ? '' : 's'} at ${rps} r/s each, ${durationMs / 1000} s${window}`;
}
