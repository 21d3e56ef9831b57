/** A request time read from a log: epoch milliseconds, and whether the log only gave whole seconds. */
export interface LogTime {
  readonly ms: number;
  /** `true` when the text had no fraction of a second (`[10/Oct/2000:13:55:36 -0700]`, `1700000000`). */
  readonly wholeSeconds: boolean;
}

const MONTHS: Record<string, number> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};

/** nginx `$time_local` and Apache `%t`: `10/Oct/2000:13:55:36 -0700`. */
const TIME_LOCAL =
  /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))? ([+-])(\d{2})(\d{2})$/;
/** ISO 8601 as nginx `$time_iso8601`, JSON loggers and databases write it. */
const ISO = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
/** Epoch seconds (nginx `$msec` is `1700000000.123`) or milliseconds. */
const EPOCH = /^\d{9,16}(\.\d{1,9})?$/;
/** Below this an epoch number is in seconds (year 5138 in seconds; 1973 in milliseconds). */
const SECONDS_BELOW = 1e11;
/** The last time a JavaScript `Date` holds (year 275760): past it, no report could print it. */
const LAST_MS = 8.64e15;

/** `{ ms, wholeSeconds }` for a time a date can hold, else `undefined`. */
function timeOf(ms: number, wholeSeconds: boolean): LogTime | undefined {
  return Number.isFinite(ms) && Math.abs(ms) <= LAST_MS ? { ms, wholeSeconds } : undefined;
}

/**
 * Parses the time of a log line, in the forms logs write it:
 *
 * - `10/Oct/2000:13:55:36 -0700` (nginx `$time_local`, Apache `%t`; brackets are stripped),
 * - ISO 8601 (`2000-10-10T13:55:36.123Z`, `2000-10-10 13:55:36+02:00`); without an offset the
 *   time is read as UTC, so a replay does not depend on the machine's time zone,
 * - epoch seconds (`1700000000`, `1700000000.123` as nginx `$msec`) or milliseconds
 *   (`1700000000123`), as text or as a JSON number.
 *
 * @param value - the field as read
 * @returns the time, or `undefined` when `value` is none of these
 */
export function parseLogTime(value: unknown): LogTime | undefined {
  if (typeof value === 'number') return fromEpoch(value, !Number.isInteger(value));
  if (typeof value !== 'string') return undefined;
  const text = value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value;
  const local = TIME_LOCAL.exec(text);
  if (local) return fromTimeLocal(local);
  const iso = ISO.exec(text);
  if (iso) {
    // Date.parse reads only the ECMAScript form reliably: 'T', an upper-case 'Z', '+hh:mm'.
    const zone =
      iso[2] === undefined
        ? 'Z'
        : /^z$/i.test(iso[2])
          ? 'Z'
          : iso[2].replace(/^([+-]\d{2}):?(\d{2})$/, '$1:$2');
    const ms = Date.parse(
      `${text.slice(0, text.length - (iso[2]?.length ?? 0)).replace(/[ t]/, 'T')}${zone}`,
    );
    return timeOf(ms, iso[1] === undefined);
  }
  if (EPOCH.test(text)) return fromEpoch(Number(text), text.includes('.'));
  return undefined;
}

function fromEpoch(value: number, fraction: boolean): LogTime | undefined {
  if (!Number.isFinite(value) || value <= 0) return undefined;
  if (value < SECONDS_BELOW) return timeOf(Math.floor(value * 1000), !fraction);
  return timeOf(Math.floor(value), false);
}

function fromTimeLocal(match: RegExpExecArray): LogTime | undefined {
  const [, day, monthName, year, hour, minute, second, fraction, sign, offsetHours, offsetMinutes] = match;
  const month = MONTHS[monthName as string];
  if (month === undefined) return undefined;
  const utc = Date.UTC(Number(year), month, Number(day), Number(hour), Number(minute), Number(second));
  const offsetMs = (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000 * (sign === '-' ? -1 : 1);
  const ms = utc - offsetMs + (fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000));
  return timeOf(ms, fraction === undefined);
}

/**
 * {@link parseLogTime} remembering the last text it parsed: consecutive log lines mostly share
 * their second, so most lines cost one string comparison.
 */
export function cachedLogTime(): (value: unknown) => LogTime | undefined {
  let lastText: unknown;
  let last: LogTime | undefined;
  return (value) => {
    if (value === lastText && typeof value === 'string') return last;
    lastText = value;
    last = parseLogTime(value);
    return last;
  };
}
