import { ReplayInputError } from '../errors';
import type { RequestSink } from '../input/sequencer';
import { arrivals, seededRandom, type Segment } from './arrivals';

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
 */
function patternShape(options: PatternOptions): {
  segments: Segment[];
  random: boolean;
  weightOf: (keyIndex: number) => number;
} {
  const { name, durationMs: duration, rps, windowMs: window } = options;
  switch (name) {
    case 'steady':
      return { segments: [{ startMs: 0, endMs: duration, rps }], random: false, weightOf: () => 1 };
    case 'burst': {
      const segments: Segment[] = [];
      for (let start = 0; start < duration; start += BURST_PERIOD_MS) {
        segments.push({
          startMs: start,
          endMs: Math.min(duration, start + BURST_PERIOD_MS / 10),
          rps: rps * 10,
        });
      }
      return { segments, random: false, weightOf: () => 1 };
    }
    case 'boundary': {
      const segments: Segment[] = [];
      for (let open = 0; open < duration; open += 2 * window) {
        // The probe, then the window's last tenth and the next window's first tenth.
        segments.push({ startMs: open, endMs: Math.min(duration, open + 1), rps: 1000 });
        const edge = open + window;
        segments.push({
          startMs: edge - window / 10,
          endMs: Math.min(duration, edge + window / 10),
          rps: rps * 10,
        });
      }
      return { segments, random: false, weightOf: () => 1 };
    }
    case 'flash-sale': {
      let harmonic = 0;
      for (let i = 1; i <= options.keys; i++) harmonic += 1 / i;
      const opens = duration / 4;
      const halfLife = duration / 10;
      const segments: Segment[] = [];
      const step = Math.max(100, Math.min(1000, duration / 600));
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
      return { segments, random: true, weightOf: (i) => options.keys / harmonic / (i + 1) };
    }
  }
}

/** One key's next arrival, in the merge of all keys. */
interface Head {
  at: number;
  readonly key: string;
  readonly next: Iterator<number, void>;
}

/** Most requests a pattern may come to (mean rate × keys × duration): about half a minute of replay. */
export const MAX_PATTERN_REQUESTS = 50_000_000;
/** Most windows `boundary` may attack (each is a segment of every key's arrivals). */
export const MAX_PATTERN_WINDOWS = 1_000_000;

/**
 * Refuses a pattern too big to generate in reasonable time and memory, naming what to lower:
 * `--rps 1000000 --keys 100000 --duration 365d` would be 3e18 requests, `--pattern boundary
 * --window 1ms --duration 1d` 86 million windows.
 *
 * @throws {@link ReplayInputError} naming the options
 */
export function checkPatternSize({ name, durationMs, rps, keys, windowMs }: PatternOptions): void {
  const requests = (rps * keys * durationMs) / 1000;
  if (requests > MAX_PATTERN_REQUESTS) {
    throw new ReplayInputError(
      `--pattern ${name}: ${keys} key${keys === 1 ? '' : 's'} × ${rps} r/s × ${durationMs / 1000} s come to about ${requests.toPrecision(3)} requests; at most ${MAX_PATTERN_REQUESTS.toLocaleString('en-US')} are generated: lower --duration, --rps or --keys`,
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
  const { segments, random, weightOf } = patternShape(options);
  for (let i = 0; i < options.keys; i++) {
    const next = arrivals(segments, i / options.keys, {
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
