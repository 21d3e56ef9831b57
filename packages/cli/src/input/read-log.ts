import { SluiceConfigError } from '@sluice/core';
import { compileKeyTemplate, compileTrustProxy, resolveIpv6Subnet } from '@sluice/core/adapter';
import { ReplayInputError } from '../errors';
import { quoteLeftOpen } from './csv-fields';
import { forEachLine, MAX_LINE_BYTES, openLog, type LineHandlers } from './lines';
import {
  detectFormat,
  lineParser,
  MISPLACED_QUOTE,
  shortened,
  type KeyChoice,
  type LineParser,
  type LogEntry,
  type LogFormat,
} from './log-formats';
import { Sequencer, type RequestSink } from './sequencer';

/** Replay an access log. */
export interface LogInput {
  readonly kind: 'log';
  /** The file (`.gz` is decompressed), or `-` for standard input. */
  readonly path: string;
  /** @defaultValue `'auto'`: guessed from the first line */
  readonly format?: 'auto' | LogFormat;
  /** nginx key template (`$remote_addr`, `$arg_sku_id`, `$http_user_id:$arg_sku_id`). @defaultValue `'$remote_addr'` */
  readonly key?: string;
  /** JSON and CSV: the key is this field's value, as it is (instead of `key`). */
  readonly keyField?: string;
  /** JSON and CSV: the field holding the time. @defaultValue the first of `time`, `timestamp`, `@timestamp`, `ts`, `time_iso8601`, `time_local`, `msec`, `date` */
  readonly timeField?: string;
  /**
   * `$remote_addr` reads the client from `X-Forwarded-For` (combined logs in nginx's `main`
   * format, a JSON/CSV `http_x_forwarded_for` field) behind these proxies, as the adapters'
   * `trustProxy` option: `true`, a hop count, addresses or subnets (`'10.0.0.0/8'`, `'loopback'`).
   * @defaultValue none: the logged client address
   */
  readonly trustProxy?: boolean | number | string;
  /** IPv6 clients are keyed by this prefix, as the adapters do. @defaultValue 64 */
  readonly ipv6Subnet?: number;
  /** Space the requests of a whole-second time evenly across their second. @defaultValue true */
  readonly spread?: boolean;
}

/** A line of the log that could not be read. */
export interface LineError {
  readonly line: number;
  readonly reason: string;
  /** The line's start, for the report. */
  readonly text: string;
}

/** Line errors kept for the report; the rest are only counted. */
export const MAX_LINE_ERRORS = 20;

/** What reading a log found, besides the requests it sent. */
export interface LogRead {
  /** The log in words: `access.log (combined, key $remote_addr)`. */
  readonly source: string;
  readonly format: LogFormat | undefined;
  readonly lines: number;
  readonly unparsed: number;
  readonly lineErrors: LineError[];
  readonly outOfOrder: number;
}

/** The reason given for a line the sequencer left out (see `Sequencer`). */
const BAD_TIME = 'time more than a minute ahead of the lines before and after it: a bad time, left out';
/** The same for the first line, which has no line before it. */
const BAD_FIRST_TIME = 'time more than a minute ahead of the two lines after it: a bad time, left out';

/**
 * Streams the log of `input` into `sink`, line by line: detects the format from the first line
 * (unless given), parses each line, counts and keeps the first {@link MAX_LINE_ERRORS} lines
 * that do not parse, and puts the rest in time order ({@link Sequencer}).
 *
 * @throws {@link ReplayInputError} for a log that cannot be read at all: unreadable, an unknown
 *   format, a CSV header without a time, an invalid key
 */
export async function readLog(input: LogInput, sink: RequestSink): Promise<LogRead> {
  const key = keyChoice(input);
  const requested = input.format ?? 'auto';
  if (requested !== 'auto' && !(['combined', 'json', 'csv'] as const).includes(requested)) {
    throw new ReplayInputError(`--format ${JSON.stringify(requested)}: expected auto, combined, json or csv`);
  }
  const stream = await openLog(input.path);
  const lineErrors: LineError[] = [];
  let format: LogFormat | undefined;
  let parser: LineParser | undefined;
  let lines = 0;
  let unparsed = 0;
  let entries = 0;
  /** The line the sequencer holds (far ahead of those before it), reported if it is dropped. */
  let held: LineError | undefined;
  const sequencer = new Sequencer(sink, input.spread ?? true, () => {
    unparsed++;
    if (held !== undefined && lineErrors.length < MAX_LINE_ERRORS) lineErrors.push(held);
  });
  const parserOptions = { key, ...(input.timeField === undefined ? {} : { timeField: input.timeField }) };
  const handlers: LineHandlers = {
    line(line, lineNumber) {
      if (line.trim() === '') return;
      if (parser === undefined) {
        format = requested === 'auto' ? detectFormat(line, input.timeField) : requested;
        if (format === undefined) {
          throw new ReplayInputError(
            `${input.path}: unknown log format: line ${lineNumber} (${snippet(line)}) is not a combined or common log line, a JSON object, or a CSV header naming a time field; pass --format combined|json|csv`,
          );
        }
        parser = lineParser(format, parserOptions, line);
        // The header is one line; the records after it may hold newlines in quoted fields.
        if (format === 'csv') {
          handlers.csv = true;
          return;
        }
      }
      const entry = parser(line);
      // A CSV record whose quoted field spans lines but whose quotes do not parse (closed, then
      // followed by more text) was not written by a CSV writer, which doubles every quote in a
      // field: it is a line with a stray quote. Its lines are read one by one, as before records
      // could span lines, so that one broken line does not take the next ones with it. A record
      // a writer wrote always parses, whatever its fields hold, so a field's newlines never make
      // records this way; one cut off inside a quoted field (the log's end) stays one bad record.
      if (entry === MISPLACED_QUOTE && line.includes('\n') && !quoteLeftOpen(line)) {
        line.split('\n').forEach((piece, i) => {
          const text = piece.endsWith('\r') ? piece.slice(0, -1) : piece;
          if (text.trim() !== '') take(text, lineNumber + i, (parser as LineParser)(text));
        });
      } else {
        take(line, lineNumber, entry);
      }
    },
    tooLong(head, lineNumber, lastLine) {
      unparsed++;
      const reason =
        lastLine > lineNumber
          ? `record longer than ${MAX_LINE_BYTES} bytes (lines ${lineNumber} to ${lastLine}: a quote left open?)`
          : `line longer than ${MAX_LINE_BYTES} bytes`;
      if (lineErrors.length < MAX_LINE_ERRORS)
        lineErrors.push({ line: lineNumber, reason, text: snippet(head) });
    },
  };
  function take(line: string, lineNumber: number, entry: LogEntry | string): void {
    if (typeof entry === 'string') {
      unparsed++;
      if (lineErrors.length < MAX_LINE_ERRORS)
        lineErrors.push({ line: lineNumber, reason: entry, text: snippet(line) });
      return;
    }
    if (sequencer.push(entry.time, entry.key))
      held = { line: lineNumber, reason: entries === 0 ? BAD_FIRST_TIME : BAD_TIME, text: snippet(line) };
    entries++;
  }
  try {
    lines = await forEachLine(stream, handlers);
  } catch (error) {
    if (error instanceof ReplayInputError) throw error;
    // Not `instanceof Error`: errors from Node's streams may come from another realm (a test VM).
    const message = (error as { message?: unknown } | null)?.message;
    throw new ReplayInputError(
      `cannot read ${input.path}: ${typeof message === 'string' ? message : String(error)}`,
    );
  }
  sequencer.end();
  const keyText = key.kind === 'field' ? `key field ${key.field}` : `key ${key.text}`;
  return {
    source: `${input.path} (${format ?? requested}, ${keyText})`,
    format,
    lines,
    unparsed,
    lineErrors,
    outOfOrder: sequencer.outOfOrder,
  };
}

function keyChoice(input: LogInput): KeyChoice {
  if (input.keyField !== undefined) {
    if (input.key !== undefined) throw new ReplayInputError('--key and --key-field: give one of them');
    if (input.keyField === '') throw new ReplayInputError('--key-field "": name a field');
    return { kind: 'field', field: input.keyField };
  }
  const template = input.key ?? '$remote_addr';
  try {
    const ipv6Subnet = resolveIpv6Subnet(input.ipv6Subnet);
    const trust = compileTrustProxy(input.trustProxy);
    return { kind: 'template', read: compileKeyTemplate(template, { trust, ipv6Subnet }), text: template };
  } catch (error) {
    if (error instanceof SluiceConfigError) {
      const option = { key: 'key', trustProxy: 'trust-proxy' }[error.option] ?? 'ipv6-subnet';
      throw new ReplayInputError(`--${option}: ${error.message}`);
    }
    throw error;
  }
}

function snippet(line: string): string {
  return JSON.stringify(shortened(line));
}
