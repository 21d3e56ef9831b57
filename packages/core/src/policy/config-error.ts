/** Machine-readable reason of a {@link SluiceConfigError}. */
export type SluiceConfigErrorCode =
  'SLUICE_INVALID_OPTION' | 'SLUICE_UNKNOWN_OPTION' | 'SLUICE_MISSING_OPTION' | 'SLUICE_INVALID_ARGUMENT';

/**
 * Thrown when an option (or a per-call argument such as `cost`) is invalid. Options are validated
 * once, when the limiter or middleware is created, never at the first request.
 *
 * The message names the option, the value received and what is accepted, e.g.
 * `rate "6r/x": unit must be r/s or r/m`.
 */
export class SluiceConfigError extends Error {
  override readonly name = 'SluiceConfigError';
  /** Machine-readable reason. */
  readonly code: SluiceConfigErrorCode;
  /** Name of the offending option, e.g. `'rate'` or `'burst'`. */
  readonly option: string;
  /** The value that was received. */
  readonly value: unknown;
  /** What is accepted instead, as in the message (`'unit must be r/s or r/m'`). */
  readonly accepted: string;

  constructor(
    option: string,
    value: unknown,
    accepted: string,
    code: SluiceConfigErrorCode = 'SLUICE_INVALID_OPTION',
  ) {
    super(`${option} ${describeValue(value)}: ${accepted}`);
    this.code = code;
    this.option = option;
    this.value = value;
    this.accepted = accepted;
  }

  /**
   * The same error about an option nested elsewhere, e.g. `rate` → `rules[1].rate`.
   * @param option - the option's full name
   */
  renamed(option: string): SluiceConfigError {
    return new SluiceConfigError(option, this.value, this.accepted, this.code);
  }
}

/** Renders a received value for an error message: strings quoted, long text cut. */
export function describeValue(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value);
  else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    text = String(value);
  else if (value === undefined) text = 'undefined';
  else if (value === null) text = 'null';
  else if (value instanceof Error) text = `${value.name}: ${value.message}`;
  else if (typeof value === 'function') text = 'a function';
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      try {
        text = Object.prototype.toString.call(value);
      } catch {
        text = 'an object'; // a Proxy whose every trap throws
      }
    }
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
