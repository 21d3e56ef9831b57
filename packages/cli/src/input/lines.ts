import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { describeFsError, ReplayInputError } from '../errors';
import { CsvRecordEnds } from './csv-fields';

/**
 * The longest line read, in bytes of UTF-8 (a CSV record with the newlines of its quoted fields
 * counts whole): 1 MiB. nginx lines are far shorter (its request line and each header are held
 * in 8 KiB buffers by default, `large_client_header_buffers`), so a longer line is corrupt or
 * hostile; it is dropped as it comes, so a log without newlines (a decompression bomb) holds
 * no more than this.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

/** The start kept of a line longer than {@link MAX_LINE_BYTES}, for the report (characters). */
const HEAD_CHARS = 100;

/** What {@link forEachLine} calls; `lineNumber` counts from 1, as editors and `sed -n` do. */
export interface LineHandlers {
  /**
   * Each line, in order, without its `\n` or `\r\n`; the last one even without a final newline.
   * A CSV record (see `csv`) is one call with the number of its first line.
   */
  line(text: string, lineNumber: number): void;
  /**
   * A line longer than {@link MAX_LINE_BYTES}, instead of `line`: its first 100 characters, and
   * the number of its last line (a CSV record may span lines).
   */
  tooLong(head: string, lineNumber: number, lastLine: number): void;
  /**
   * From the next line on, read CSV records (RFC 4180): a newline inside a quoted field does not
   * end the record. Read after each line, so the handler of a CSV header can set it.
   * @defaultValue false
   */
  csv?: boolean;
}

/**
 * Reads `stream` as UTF-8 and calls `handlers` for each line. A byte-order mark at the start is
 * no part of the first line. Memory holds one chunk and at most {@link MAX_LINE_BYTES} of one
 * line, whatever the stream: a log is never read whole, a longer line never held.
 *
 * A plain splitter rather than `readline`: the handler runs synchronously inside the chunk loop,
 * which is what lets a million lines replay in a few seconds (no promise per line).
 *
 * @param stream - the log (a file, a gunzip stream, stdin)
 * @param handlers - called for each line; an exception from them stops the reading and rejects
 * @returns the number of lines read
 */
export async function forEachLine(stream: Readable, handlers: LineHandlers): Promise<number> {
  stream.setEncoding('utf8');
  const records = new CsvRecordEnds();
  /** The number of the line being read (the first line of a CSV record). */
  let lineNumber = 1;
  /** The line so far, when it began in an earlier chunk. */
  let partial = '';
  /** The start of the line being dropped (longer than the bound); `undefined` when none is. */
  let head: string | undefined;
  let started = false;
  let csv = handlers.csv === true;
  for await (const chunk of stream as AsyncIterable<string>) {
    let start = 0;
    if (!started && chunk.length > 0) {
      started = true;
      if (chunk.charCodeAt(0) === 0xfeff) start = 1;
    }
    if (csv) records.chunk(chunk);
    for (;;) {
      const end = csv ? records.end(start) : chunk.indexOf('\n', start);
      if (end < 0) break;
      if (partial === '' && head === undefined && end - start <= MAX_LINE_BYTES / 3) {
        // The common case, checked first: a line within this chunk, too short to be too long.
        emit(chunk.slice(start, end));
      } else {
        const line = head === undefined ? keep(partial, chunk, start, end) : undefined;
        partial = '';
        if (line !== undefined) emit(line);
        else drop();
      }
      start = end + 1;
      if (!csv && handlers.csv === true) {
        csv = true;
        records.chunk(chunk);
      }
    }
    if (head === undefined) partial = keep(partial, chunk, start, chunk.length) ?? '';
  }
  if (partial === '' && head === undefined) return lineNumber - 1;
  // A CSV record left open by a quote may end in a newline: no line after it.
  const emptyLast = partial.endsWith('\n');
  if (head === undefined) emit(partial);
  else drop();
  return lineNumber - 1 - (emptyLast ? 1 : 0);

  /**
   * `partial` and `chunk[start, end)` as one line, or `undefined` when that would be longer than
   * the bound (counted in characters here, each at least one byte; in bytes by `emit`).
   */
  function keep(before: string, chunk: string, start: number, end: number): string | undefined {
    if (before.length + end - start > MAX_LINE_BYTES) {
      if (head === undefined) head = (before + chunk.slice(start, start + HEAD_CHARS)).slice(0, HEAD_CHARS);
      return undefined;
    }
    return before + chunk.slice(start, end);
  }

  function emit(line: string): void {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    // A UTF-16 unit is 1 to 3 bytes of UTF-8: only a line over a third of the bound can be over it.
    if (text.length > MAX_LINE_BYTES / 3 && Buffer.byteLength(text) > MAX_LINE_BYTES) {
      head = text.slice(0, HEAD_CHARS);
      drop();
      return;
    }
    const number = lineNumber;
    lineNumber += 1 + records.take();
    handlers.line(text, number);
  }

  function drop(): void {
    const number = lineNumber;
    lineNumber += 1 + records.take();
    const kept = head ?? '';
    head = undefined;
    handlers.tooLong(kept, number, lineNumber - 1);
  }
}

/**
 * Opens a log for reading: `-` is standard input, a name ending in `.gz` is decompressed on the
 * fly (rotated logs such as `access.log.2.gz`).
 *
 * @param path - a file path, or `-`
 * @throws {@link ReplayInputError} when the file does not exist, is a directory or may not be read
 */
export async function openLog(path: string): Promise<Readable> {
  if (path === '-') return process.stdin;
  let handle;
  try {
    handle = await open(path, 'r');
    if ((await handle.stat()).isDirectory()) {
      await handle.close();
      throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    }
  } catch (error) {
    throw new ReplayInputError(`cannot read ${path}: ${describeFsError(error)}`);
  }
  const file = handle.createReadStream({ highWaterMark: 256 * 1024 });
  if (!path.endsWith('.gz')) return file;
  const gunzip = createGunzip();
  file.on('error', (error) => gunzip.destroy(error));
  return file.pipe(gunzip);
}
