import { SluiceConfigError } from '../policy/config-error';

/*
 * Checks of one option's value shared by the HTTP options' resolvers: each returns the value, or
 * its default when it is left out, and throws a SluiceConfigError naming the option otherwise.
 */

/** One of `accepted`, or `fallback` when left out. */
export function oneOf<T extends string>(
  option: string,
  value: unknown,
  accepted: readonly T[],
  fallback: T,
  extra = '',
): T {
  if (value === undefined) return fallback;
  if (!(accepted as readonly unknown[]).includes(value)) {
    throw new SluiceConfigError(
      option,
      value,
      `expected one of ${accepted.map((a) => `'${a}'`).join(', ')}${extra}`,
    );
  }
  return value as T;
}

/** A whole number from `min` to `max`, or `fallback` when left out. */
export function wholeNumberIn(
  option: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SluiceConfigError(option, value, `must be a whole number from ${min} to ${max}`);
  }
  return value;
}

/** `true` or `false`; `false` when left out. */
export function boolean(option: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new SluiceConfigError(option, value, 'must be true or false');
  return value;
}

/** A function, or `undefined` when left out. */
export function optionalFunction<F>(option: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function')
    throw new SluiceConfigError(option, value, 'must be a function');
  return value;
}
