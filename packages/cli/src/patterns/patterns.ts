import { ReplayInputError } from '../errors';
import type { RequestSink } from '../input/sequencer';
import { arrivals, seededRandom, Timeline, type Segment } from './arrivals';

/** The traffic `sluice replay --pattern` generates. */
export const PATTERNS = ['steady', 'burst', 'boundary', 'flash-sale'] as const;
/** One of {@link PATTERNS}. */
export type PatternName = (typeof PATTERNS)[number];

/** What shapes a generated pattern. */
export interface PatternOptions {
  readonly name: PatternName;
  /** Length of the traffic, ms. @defaultValue 60 000 */
  readonly durationMs: number;
  /** Mean requests per second of each key. @defaultValue 10 */
  readonly rps: number;
  /** Distinct keys (`client-1`, `client-2`, …; the command allows up to 100 000). @defaultValue 1 */
  readonly keys: number;
  /** `boundary`: the fixed window attacked, ms. @defaultValue the first policy's window */
  readonly windowMs: number;
  /** `flash-sale`: the seed of its random arrivals. @defaultValue 1 */
  readonly seed: number;
}

/**
 * Where generated traffic starts: 2025-01-01T00:00:00Z, a whole number of any window up to a day,
 * so window algorithms' boundaries fall at round times, and the charts never change.
 */
export const PATTERN_EPOCH_MS = Date.UTC(2025, 0, 1);

/** Burst: every this many ms, the period's requests arrive within its first tenth. */
const BURST_PERIOD_MS = 10_000;

/**
 * Each key's rates over time, and whether its arrivals are random:
 *
 * - `steady`: `rps`, evenly spaced.
 * - `burst`: the same mean, in bursts: every 10 s, 10 s worth of requests within 1 s.
 * - `boundary`: the fixed-window edge attack, every two windows: one request opens the key's
 *   window (a fixed window starts at a key's first request; the attacker reads when it ends from
 *   the `RateLimit` header), then the key sends a whole window's worth (`rps × window`) in the
 *   window's last tenth and as much in the next window's first tenth: a fixed window admits
 *   twice its limit within a fifth of a window.
 * - `flash-sale`: calm (a fifth of `rps`) until a quarter of the way, then a surge to 5 × `rps`
 *   that halves every tenth of the duration; random (Poisson) arrivals, keys weighted 1/rank
 *   (Zipf), so a few keys are much hotter than the rest.
 *
 * The periodic patterns are one period of stretches, repeated: nothing is built per period.
 */
function patternShape(options: PatternOptions): {
  timeline: Timeline;
  random: boolean;
  weightOf: (keyIndex: number) => number;
} {
  const { name, durationMs: duration, rps, windowMs: window } = options;
  const even = (segments: Segment[], periodMs: number) => ({
    timeline: new Timeline(segments, periodMs, duration),
    random: false,
    weightOf: () => 1,
  });
  switch (name) {
    case 'steady':
      return even([{ startMs: 0, endMs: duration, rps }], duration);
    case 'burst':
      return even([{ startMs: 0, endMs: BURST_PERIOD_MS / 10, rps: rps * 10 }], BURST_PERIOD_MS);
    case 'boundary':
      // The probe, then the window's last tenth and the next window's first tenth.
      return even(
        [
          { startMs: 0, endMs: 1, rps: 1000 },
          { startMs: window - window / 10, endMs: window + window / 10, rps: rps * 10 },
        ],
        2 * window,
      );
    case 'flash-sale': {
      let harmonic = 0;
      for (let i = 1; i <= options.keys; i++) harmonic += 1 / i;
      const opens = duration / 4;
      const halfLife = duration / 10;
      // At most 600 stretches (60 a half-life) whatever the duration: the surge's curve, not a
      // stretch per second of a year.
      const step = Math.max(100, duration / 600);
      const segments: Segment[] = [];
      for (let start = 0; start < duration; start += step) {
        const middle = start + step / 2;
        const surge = middle < opens ? 0 : 4.8 * 0.5 ** ((middle - opens) / halfLife);
        segments.push({
          startMs: start,
          endMs: Math.min(duration, start + step),
          rps: rps * (0.2 + surge),
        });
      }
      // Key i sends 1/(i+1) as much as the first; the mean over keys stays `rps`.
      return {
        timeline: new Timeline(segments, duration, duration),
        random: true,
        weightOf: (i) => options.keys / harmonic / (i + 1),
      };
    }
  }
}

/** One key's next arrival, in the merge of all keys. */
interface Head {
  at: number;
  readonly key: string;
  readonly next: Iterator<number, void>;
}

/** Most requests a pattern may generate: about half a minute of replay. */
export const MAX_PATTERN_REQUESTS = 50_000_000;
/** Most windows `boundary` may attack. */
export const MAX_PATTERN_WINDOWS = 1_000_000;

/** Standard deviations above its mean that a Poisson pattern's count is bounded by. */
const POISSON_MARGIN = 8;

/**
 * The most requests a pattern generates: exact to within one a key for the even patterns (a key
 * of `n.f` requests' worth sends `n` or `n + 1`), so `boundary` counts each key's
 * window-opening request every two windows, not only `rps`; for `flash-sale` (Poisson) its mean
 * plus eight standard deviations, which a seeded run all but never passes (and
 * {@link generatePattern} stops at {@link MAX_PATTERN_REQUESTS} regardless). Computed from one
 * period, whatever the duration.
 */
export function patternRequestBound(options: PatternOptions): number {
  const { timeline, random } = patternShape(options);
  // Keys' weights add up to `keys`: the pattern sends `keys` × one key's worth at weight 1.
  const mean = timeline.total * options.keys;
  return random ? mean + POISSON_MARGIN * Math.sqrt(mean) + POISSON_MARGIN : mean + options.keys;
}

/**
 * Refuses a pattern too big to generate in reasonable time, naming what to lower:
 * `--rps 1000000 --keys 100000 --duration 365d` would be 3e18 requests, `--pattern boundary
 * --window 2ms --duration 2000s --keys 1000` 5e8 (a window-opening request per key every 4 ms),
 * `--pattern boundary --window 1ms --duration 1d` 86 million windows.
 *
 * @throws {@link ReplayInputError} naming the options
 */
export function checkPatternSize(options: PatternOptions): void {
  const { name, durationMs, rps, keys, windowMs } = options;
  const requests = patternRequestBound(options);
  if (requests > MAX_PATTERN_REQUESTS) {
    const cycles = Math.ceil(durationMs / (2 * windowMs));
    const probes =
      name === 'boundary'
        ? ` and a window-opening request per key every two windows (${(cycles * keys).toPrecision(3)})`
        : '';
    const lower =
      name === 'boundary'
        ? 'lower --duration, --rps or --keys, or raise --window'
        : 'lower --duration, --rps or --keys';
    throw new ReplayInputError(
      `--pattern ${name}: ${keys} key${keys === 1 ? '' : 's'} × ${rps} r/s × ${durationMs / 1000} s${probes} come to about ${requests.toPrecision(3)} requests; at most ${MAX_PATTERN_REQUESTS.toLocaleString('en-US')} are generated: ${lower}`,
    );
  }
  const windows = durationMs / windowMs;
  if (name === 'boundary' && windows > MAX_PATTERN_WINDOWS) {
    throw new ReplayInputError(
      `--pattern boundary: ${durationMs / 1000} s are ${windows.toPrecision(3)} windows of ${windowMs} ms; at most ${MAX_PATTERN_WINDOWS.toLocaleString('en-US')}: lower --duration or raise --window`,
    );
  }
}

/** The key text of generated key `index` (from 0). */
export function patternKey(index: number): string {
  return `client-${index + 1}`;
}

/**
 * Generates a pattern's requests in time order into `sink`, from {@link PATTERN_EPOCH_MS}. The
 * same options always give the same requests: keys interleave by a fixed phase, and random
 * arrivals come from a generator seeded with `seed` and the key.
 *
 * @returns how many requests were generated
 */
export function generatePattern(options: PatternOptions, sink: RequestSink): number {
  const heads: Head[] = [];
  const { timeline, random, weightOf } = patternShape(options);
  for (let i = 0; i < options.keys; i++) {
    const next = arrivals(timeline, i / options.keys, {
      scale: weightOf(i),
      ...(random ? { random: seededRandom(options.seed * 1_000_003 + i) } : {}),
    });
    const first = next.next();
    if (first.done !== true) heads.push({ at: first.value, key: patternKey(i), next });
  }

  // A binary min-heap on the next arrival of each key merges them in time order.
  const at = (index: number): number => (heads[index] as Head).at;
  const less = (a: number, b: number): boolean => at(a) < at(b);
  heapify(heads.length, less, swapIn(heads));
  let count = 0;
  while (heads.length > 0) {
    const head = heads[0] as Head;
    // checkPatternSize bounds every pattern under this; a Poisson one could pass its bound.
    if (count === MAX_PATTERN_REQUESTS)
      throw new ReplayInputError(
        `--pattern ${options.name}: more than ${MAX_PATTERN_REQUESTS.toLocaleString('en-US')} requests; lower --duration, --rps or --keys`,
      );
    sink.request(PATTERN_EPOCH_MS + Math.floor(head.at), head.key);
    count++;
    const following = head.next.next();
    if (following.done === true) {
      const last = heads.pop() as Head;
      if (heads.length === 0) break;
      heads[0] = last;
    } else {
      head.at = following.value;
    }
    siftDown(0, heads.length, less, swapIn(heads));
  }
  return count;
}

function swapIn<T>(items: T[]): (a: number, b: number) => void {
  return (a, b) => {
    const item = items[a] as T;
    items[a] = items[b] as T;
    items[b] = item;
  };
}

function heapify(
  length: number,
  less: (a: number, b: number) => boolean,
  swap: (a: number, b: number) => void,
): void {
  for (let i = (length >> 1) - 1; i >= 0; i--) siftDown(i, length, less, swap);
}

function siftDown(
  index: number,
  length: number,
  less: (a: number, b: number) => boolean,
  swap: (a: number, b: number) => void,
): void {
  for (;;) {
    const left = 2 * index + 1;
    if (left >= length) return;
    const child = left + 1 < length && less(left + 1, left) ? left + 1 : left;
    if (!less(child, index)) return;
    swap(child, index);
    index = child;
  }
}
