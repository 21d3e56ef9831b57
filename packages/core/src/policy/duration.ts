import { SluiceConfigError } from './config-error';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Longest window or duration accepted: one year, so every derived number stays an exact integer. */
export const MAX_DURATION_MS = 365 * UNIT_MS.d;

const DURATION = /^(\d{1,12}(?:\.\d{1,6})?)(ms|s|m|h|d)$/;

/** What {@link parseDuration} accepts, for error messages. */
export const DURATION_FORMS = `milliseconds as a positive integer, or a string like "500ms", "1s", "1m", "1h", "1d"`;

/**
 * Parses a duration into whole milliseconds: a positive integer (ms) or `'<n><unit>'` with unit
 * `ms`, `s`, `m`, `h` or `d` (`'1.5s'` is 1500 ms).
 *
 * @param option - option name for the error message
 * @throws {@link SluiceConfigError} naming `option` when the value is not a whole number of ms in (0, 1 year]
 */
export function parseDuration(option: string, value: unknown): number {
  let ms: number;
  if (typeof value === 'number') {
    ms = value;
  } else if (typeof value === 'string') {
    const match = DURATION.exec(value);
    if (!match) throw new SluiceConfigError(option, value, `expected ${DURATION_FORMS}`);
    ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    // '1.5s' is exactly 1500 but 0.1 * 3 style float noise must not make it 1499.9999.
    ms = Math.round(ms * 1e6) / 1e6;
  } else {
    throw new SluiceConfigError(option, value, `expected ${DURATION_FORMS}`);
  }
  if (!Number.isInteger(ms) || ms <= 0) {
    throw new SluiceConfigError(option, value, 'must be a whole number of milliseconds greater than 0');
  }
  if (ms > MAX_DURATION_MS) throw new SluiceConfigError(option, value, 'must be at most 1 year (365d)');
  return ms;
}
