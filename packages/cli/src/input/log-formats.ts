import { RequestView, type KeyReader } from '@sluice/core/adapter';
import { ReplayInputError } from '../errors';
import { parseCombinedLine } from './combined-format';
import { splitCsvLine } from './csv-fields';
import { cachedLogTime, type LogTime } from './log-time';
import { recordRequest, text, TIME_FIELDS, type LogRecord } from './record-request';

/** The log formats `sluice replay` reads. */
export const LOG_FORMATS = ['combined', 'json', 'csv'] as const;
/** One of {@link LOG_FORMATS}. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** How a line's key is found: an nginx key template, or (JSON, CSV) one field's value as it is. */
export type KeyChoice =
  | { readonly kind: 'template'; readonly read: KeyReader; readonly text: string }
  | { readonly kind: 'field'; readonly field: string };

/** What one log line contributes: when, and for which key (`''`: none, not limited). */
export interface LogEntry {
  readonly time: LogTime;
  readonly key: string;
}

/** Parses one line: its entry, or why it does not parse (a short phrase for the report). */
export type LineParser = (line: string) => LogEntry | string;

/** Options shared by the parsers. */
export interface ParserOptions {
  readonly key: KeyChoice;
  /** JSON and CSV: the field holding the time; by default the first of {@link TIME_FIELDS} present. */
  readonly timeField?: string;
}

/**
 * Guesses the format from the first line that is not empty: a JSON object, a combined (or
 * common) log line, or a CSV header naming a time field.
 *
 * @returns the format, or `undefined` when the line looks like none of them
 */
export function detectFormat(firstLine: string, timeField?: string): LogFormat | undefined {
  const line = firstLine.trim();
  if (line.startsWith('{')) return 'json';
  if (parseCombinedLine(line) !== undefined) return 'combined';
  const header = splitCsvLine(line);
  if (header !== undefined && header.length >= 2 && csvTimeColumn(header, timeField) >= 0) return 'csv';
  return undefined;
}

/**
 * The parser of `format`. CSV needs its header (the log's first line), which names the fields.
 *
 * @throws {@link ReplayInputError} when the CSV header has no time field, or `--key-field` is used on a combined log
 */
export function lineParser(format: LogFormat, options: ParserOptions, csvHeader?: string): LineParser {
  switch (format) {
    case 'combined':
      return combinedParser(options.key);
    case 'json':
      return jsonParser(options);
    case 'csv':
      return csvParser(options, csvHeader ?? '');
  }
}

function combinedParser(key: KeyChoice): LineParser {
  if (key.kind === 'field') {
    throw new ReplayInputError(
      "--key-field reads a JSON or CSV field; a combined log is keyed with --key (e.g. --key '$remote_addr')",
    );
  }
  const timeOf = cachedLogTime();
  return (line) => {
    const parsed = parseCombinedLine(line);
    if (parsed === undefined) return 'not a combined or common log line';
    const time = timeOf(parsed.time);
    if (time === undefined) return `time [${shortened(parsed.time)}] is not a time`;
    return { time, key: key.read(new RequestView(parsed.request)) };
  };
}

function recordEntry(
  record: LogRecord,
  options: ParserOptions,
  timeOf: (value: unknown) => LogTime | undefined,
): LogEntry | string {
  const timeName =
    options.timeField ?? TIME_FIELDS.find((name) => record[name] !== undefined && record[name] !== '');
  const value = timeName === undefined ? undefined : field(record, timeName);
  if (value === undefined || value === '') {
    return options.timeField === undefined
      ? `no time field (looked for ${TIME_FIELDS.join(', ')}; name one with --time-field)`
      : `no "${options.timeField}" field`;
  }
  const time = timeOf(value);
  if (time === undefined) return `${timeName} ${shownTime(value)} is not a time`;
  const { key } = options;
  return {
    time,
    key:
      key.kind === 'field'
        ? text(field(record, key.field))
        : key.read(new RequestView(recordRequest(record))),
  };
}

function jsonParser(options: ParserOptions): LineParser {
  const timeOf = cachedLogTime();
  return (line) => {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      return 'not JSON';
    }
    if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'not a JSON object';
    return recordEntry(record as LogRecord, options, timeOf);
  };
}

/** Why a CSV record does not parse when its quotes do not (see `readLog`, which reads its lines again). */
export const MISPLACED_QUOTE = 'an unterminated or misplaced quote';

function csvParser(options: ParserOptions, headerLine: string): LineParser {
  const names = splitCsvLine(headerLine.trim())?.map((name) => name.trim());
  if (names === undefined || csvTimeColumn(names, options.timeField) < 0) {
    throw new ReplayInputError(
      `the CSV header ${JSON.stringify(headerLine.slice(0, 120))} names no time field (${options.timeField ?? TIME_FIELDS.join(', ')}); name it with --time-field`,
    );
  }
  const timeOf = cachedLogTime();
  return (line) => {
    const fields = splitCsvLine(line);
    if (fields === undefined) return MISPLACED_QUOTE;
    if (fields.length !== names.length) return `${fields.length} fields where the header has ${names.length}`;
    // No prototype: a column named `__proto__` is a field like any other.
    const record: Record<string, string> = Object.create(null) as Record<string, string>;
    names.forEach((name, i) => {
      record[name] = fields[i] as string;
    });
    return recordEntry(record, options, timeOf);
  };
}

function csvTimeColumn(header: readonly string[], timeField: string | undefined): number {
  const names = header.map((name) => name.trim());
  return timeField === undefined
    ? names.findIndex((name) => TIME_FIELDS.includes(name))
    : names.indexOf(timeField);
}

/**
 * A field the user named (`--time-field`, `--key-field`): the record's own, never what a JSON
 * object inherits (`--time-field constructor` found `Object`).
 */
function field(record: LogRecord, name: string): unknown {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/** At most 80 characters of `text`, as the report lists a bad line and its bad time. */
export function shortened(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * A time field that is no time, as the report names it: a string or number as written (a string
 * shortened), anything else by its kind. Never the whole value: one line may hold megabytes, or
 * an array nested deeper than `JSON.stringify` can go.
 */
function shownTime(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(shortened(value));
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  return Array.isArray(value) ? '[an array]' : `[an ${typeof value}]`;
}
