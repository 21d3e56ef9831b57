import { SluiceConfigError } from './config-error';

/**
 * Checks that every option given is one a factory accepts, so a typo is named at creation
 * rather than silently ignored.
 *
 * @param options - the options object as given
 * @param accepted - every name the factory accepts, in the order the error lists them
 * @param what - what the options are, as the message says it: `'option'`, `'RedisStore option'`
 * @throws {@link SluiceConfigError} (`SLUICE_UNKNOWN_OPTION`) naming the first unknown option
 */
export function checkOptionNames(options: object, accepted: ReadonlySet<string>, what = 'option'): void {
  for (const name of Object.keys(options)) {
    if (!accepted.has(name)) {
      throw new SluiceConfigError(
        name,
        (options as Record<string, unknown>)[name],
        `unknown ${what}; accepted: ${[...accepted].join(', ')}`,
        'SLUICE_UNKNOWN_OPTION',
      );
    }
  }
}

/**
 * The `prefix` option, the namespace of a limiter's keys in its store.
 *
 * @param value - the option as given
 * @defaultValue `'sluice'`
 * @throws {@link SluiceConfigError} naming `prefix` when it is not a non-empty string
 */
export function resolvePrefix(value: unknown): string {
  const prefix = value ?? 'sluice';
  if (typeof prefix !== 'string' || prefix.length === 0) {
    throw new SluiceConfigError('prefix', prefix, 'must be a non-empty string');
  }
  return prefix;
}

/** A clock reading past this is no time a store can compute with exactly (2^53 ms). */
const MAX_EPOCH_MS = 2 ** 53;

const NO_TIME = (): undefined => undefined;

/**
 * Reads a limiter's `clock` for a store call: whole epoch ms, or `undefined` without a clock
 * (the store's own time).
 * @throws {@link SluiceConfigError} naming `clock` when a reading is not from 0 to below 2^53
 */
export function clockReader(clock: (() => number) | undefined): () => number | undefined {
  if (clock === undefined) return NO_TIME;
  return () => {
    const ms = clock();
    if (!(ms >= 0 && ms < MAX_EPOCH_MS)) {
      throw new SluiceConfigError(
        'clock',
        ms,
        'must return epoch milliseconds (a number from 0, below 2^53)',
      );
    }
    return Math.floor(ms);
  };
}

/**
 * Whether `value` is a plain object (`{ … }`, or one without a prototype): not an array, a
 * `Date`, a boxed number or a class instance, whose own keys an options object would not have.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The `clock` option: epoch ms, injected by tests so they never sleep.
 *
 * @param value - the option as given
 * @returns the clock, or `undefined` without one (the store's own time)
 * @throws {@link SluiceConfigError} naming `clock` when it is not a function
 */
export function checkClock(value: unknown): (() => number) | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw new SluiceConfigError('clock', value, 'must be a function returning epoch milliseconds');
  }
  return value as (() => number) | undefined;
}

/**
 * The `timeoutMs` option: a remote store slower than this counts as failed.
 *
 * @param value - the option as given
 * @defaultValue 50
 * @throws {@link SluiceConfigError} naming `timeoutMs` unless a whole number from 1 to 60000
 */
export function resolveTimeoutMs(value: unknown): number {
  const timeoutMs = value ?? 50;
  if (typeof timeoutMs === 'number' && Number.isInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= 60_000)
    return timeoutMs;
  throw new SluiceConfigError(
    'timeoutMs',
    timeoutMs,
    'must be a whole number of milliseconds from 1 to 60000',
  );
}
