import type { BlockPolicy } from '../types';
import { SluiceConfigError } from './config-error';
import { parseDuration } from './duration';
import { isPlainObject } from './option-checks';

/**
 * The `block` option as given: `{ duration, backoff?, maxDuration? }`, durations in ms or as
 * `'15m'`, `'1h'`, … (see `parseDuration`).
 */
export interface BlockOption {
  /** How long a key refused as `'limited'` is blocked. Required. */
  duration: number | string;
  /**
   * Each block of a key blocked again within `maxDuration` of its last block's end lasts this
   * many times the last one, up to `maxDuration`. A number >= 1 (at most 1000).
   * @defaultValue 1 (every block lasts `duration`)
   */
  backoff?: number;
  /**
   * The longest block; also how long a key's last block is remembered after it ends: after
   * `maxDuration` without a refusal, the next block lasts `duration` again. At least `duration`.
   * @defaultValue with `backoff` > 1, 24 hours (or `duration` when longer); else `duration`
   */
  maxDuration?: number | string;
}

/** The longest block by default with a `backoff`: a day. */
export const DEFAULT_MAX_BLOCK_MS = 86_400_000;

/** Largest `backoff`: every block length stays an exact integer well below 2^53. */
const MAX_BACKOFF = 1000;

const FIELDS = new Set(['duration', 'backoff', 'maxDuration']);

/**
 * Validates the `block` option into a {@link BlockPolicy}; `undefined` without one.
 * @throws {@link SluiceConfigError} naming `block`, `block.duration`, `block.backoff` or `block.maxDuration`
 */
export function resolveBlock(value: unknown): BlockPolicy | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    throw new SluiceConfigError(
      'block',
      value,
      "expected { duration, backoff?, maxDuration? }, e.g. { duration: '15m' }",
    );
  }
  for (const name of Object.keys(value)) {
    if (!FIELDS.has(name)) {
      throw new SluiceConfigError(
        `block.${name}`,
        value[name],
        `unknown block field; accepted: ${[...FIELDS].join(', ')}`,
        'SLUICE_UNKNOWN_OPTION',
      );
    }
  }
  const { duration, backoff = 1, maxDuration } = value as Partial<BlockOption>;
  if (duration === undefined) {
    throw new SluiceConfigError(
      'block.duration',
      duration,
      "is required, e.g. '15m' or 900000",
      'SLUICE_MISSING_OPTION',
    );
  }
  const durationMs = parseDuration('block.duration', duration);
  if (typeof backoff !== 'number' || !Number.isFinite(backoff) || backoff < 1 || backoff > MAX_BACKOFF) {
    throw new SluiceConfigError('block.backoff', backoff, `must be a number from 1 to ${MAX_BACKOFF}`);
  }
  const maxDurationMs =
    maxDuration === undefined
      ? backoff > 1
        ? Math.max(DEFAULT_MAX_BLOCK_MS, durationMs)
        : durationMs
      : parseDuration('block.maxDuration', maxDuration);
  if (maxDurationMs < durationMs) {
    throw new SluiceConfigError(
      'block.maxDuration',
      maxDuration,
      `must be at least block.duration (${durationMs} ms)`,
    );
  }
  return Object.freeze({ durationMs, backoff, maxDurationMs });
}
