import { SluiceConfigError } from './config-error';
import { MAX_DURATION_MS, parseDuration } from './duration';

/** Largest request count per window sluice accepts: keeps every scaled number an exact integer. */
export const MAX_LIMIT = 1_000_000_000;

/** A rate as `limit` requests per `windowMs`, plus the default burst of the syntax it came from. */
export interface ParsedRate {
  /** Requests per window, integer >= 1. */
  readonly limit: number;
  /** Window in whole milliseconds. */
  readonly windowMs: number;
  /**
   * The burst to use when the user gives none: 0 for nginx rates (`'10r/s'`, as in nginx) and
   * `limit - 1` for a count per window (the whole quota usable at once, as window limiters do).
   */
  readonly defaultBurst: number;
  /** The rate as written, for headers and messages. */
  readonly source: string;
}

/** A rate as an object: `limit` requests per `window` (ms, or `'1s' '1m' '1h' '1d'`). */
export interface RateObject {
  /** Requests per window: a whole number >= 1. */
  limit: number;
  /** Window length: milliseconds, or a duration string such as `'1m'`. */
  window: number | string;
}

/** Any form the `rate` option accepts. */
export type RateInput = string | RateObject;

const RATE_FORMS =
  'expected nginx syntax like "10r/s" or "6r/m", a count per window like "100/1m", or { limit, window }';
const NGINX_RATE = /^(\d{1,10}(?:\.\d{1,6})?)r\/(.*)$/;
const COUNT_PER_WINDOW = /^(\d{1,10})\/(.+)$/;

/**
 * Parses the `rate` option. Accepts nginx syntax (`'10r/s'`, `'6r/m'`, fractions such as
 * `'0.5r/s'`), a count per window (`'100/1m'`, `'5/500ms'`) and `{ limit, window }`.
 *
 * Fractional nginx rates become the smallest whole `limit` per whole window that is exactly the
 * same rate: `'2.5r/s'` is 5 per 2 s, `'30r/m'` stays 30 per minute.
 *
 * @throws {@link SluiceConfigError} naming `option` and what is accepted
 */
export function parseRate(option: string, value: unknown): ParsedRate {
  if (typeof value === 'string') return parseRateString(option, value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    return parseRateObject(option, value);
  throw new SluiceConfigError(option, value, RATE_FORMS);
}

function parseRateString(option: string, text: string): ParsedRate {
  const nginx = NGINX_RATE.exec(text);
  if (nginx) {
    const unit = nginx[2];
    if (unit !== 's' && unit !== 'm') throw new SluiceConfigError(option, text, 'unit must be r/s or r/m');
    const [numerator, denominator] = decimalToFraction(nginx[1] as string);
    if (numerator === 0) throw new SluiceConfigError(option, text, 'rate must be greater than 0');
    const limit = numerator;
    const windowMs = denominator * (unit === 's' ? 1_000 : 60_000);
    return checked(option, text, { limit, windowMs, defaultBurst: 0, source: text });
  }
  const perWindow = COUNT_PER_WINDOW.exec(text);
  if (perWindow) {
    const limit = Number(perWindow[1]);
    const windowText = perWindow[2] as string;
    const windowMs = /^\d+$/.test(windowText) ? Number(windowText) : parseWindow(option, text, windowText);
    if (limit === 0) throw new SluiceConfigError(option, text, 'the count must be at least 1');
    return checked(option, text, { limit, windowMs, defaultBurst: limit - 1, source: text });
  }
  throw new SluiceConfigError(option, text, RATE_FORMS);
}

function parseRateObject(option: string, value: object): ParsedRate {
  for (const name of Object.keys(value)) {
    if (name !== 'limit' && name !== 'window') {
      throw new SluiceConfigError(
        `${option}.${name}`,
        (value as Record<string, unknown>)[name],
        'unknown field: a rate object has only limit and window',
      );
    }
  }
  const { limit, window } = value as Partial<RateObject>;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new SluiceConfigError(`${option}.limit`, limit, `must be a whole number from 1 to ${MAX_LIMIT}`);
  }
  const windowMs = parseDuration(`${option}.window`, window);
  return { limit, windowMs, defaultBurst: limit - 1, source: `${limit}/${formatWindow(windowMs)}` };
}

function parseWindow(option: string, text: string, windowText: string): number {
  try {
    return parseDuration(option, windowText);
  } catch {
    throw new SluiceConfigError(
      option,
      text,
      'the window after "/" must be a duration like "1s", "1m", "1h", "1d" or whole milliseconds',
    );
  }
}

function checked(option: string, text: string, rate: ParsedRate): ParsedRate {
  if (rate.limit > MAX_LIMIT)
    throw new SluiceConfigError(option, text, `at most ${MAX_LIMIT} requests per window`);
  if (rate.windowMs < 1 || rate.windowMs > MAX_DURATION_MS) {
    throw new SluiceConfigError(option, text, 'the window must be between 1 ms and 1 year');
  }
  return rate;
}

/** `'2.5'` → `[5, 2]`: the decimal as a fraction in lowest terms. */
function decimalToFraction(decimal: string): [number, number] {
  const [whole = '', fraction = ''] = decimal.split('.');
  let denominator = 10 ** fraction.length;
  let numerator = Number(whole + fraction);
  const divisor = gcd(numerator, denominator);
  if (divisor > 1) {
    numerator /= divisor;
    denominator /= divisor;
  }
  return [numerator, denominator];
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** `60000` → `'1m'`, `1500` → `'1500ms'`: the shortest exact duration text. */
export function formatWindow(windowMs: number): string {
  for (const [unit, ms] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (windowMs % ms === 0) return `${windowMs / ms}${unit}`;
  }
  return `${windowMs}ms`;
}
