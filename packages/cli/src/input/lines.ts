import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ReplayInputError } from '../errors';

/** Called once per line, in order; `lineNumber` counts from 1, as editors and `sed -n` do. */
export type LineHandler = (line: string, lineNumber: number) => void;

/**
 * Reads `stream` as UTF-8 and calls `onLine` for each line (without its `\n` or `\r\n`), the
 * last one even without a final newline. Memory holds one chunk and one partial line, whatever
 * the stream's length: a log is never read whole.
 *
 * A plain splitter rather than `readline`: the handler runs synchronously inside the chunk loop,
 * which is what lets a million lines replay in a few seconds (no promise per line).
 *
 * @param stream - the log (a file, a gunzip stream, stdin)
 * @param onLine - the handler; an exception from it stops the reading and rejects
 */
export async function forEachLine(stream: Readable, onLine: LineHandler): Promise<void> {
  stream.setEncoding('utf8');
  let partial = '';
  let lineNumber = 0;
  for await (const chunk of stream as AsyncIterable<string>) {
    let start = 0;
    let end = chunk.indexOf('\n');
    if (end >= 0 && partial !== '') {
      emit(partial + chunk.slice(0, end));
      partial = '';
      start = end + 1;
      end = chunk.indexOf('\n', start);
    }
    while (end >= 0) {
      emit(chunk.slice(start, end));
      start = end + 1;
      end = chunk.indexOf('\n', start);
    }
    partial += chunk.slice(start);
  }
  if (partial !== '') emit(partial);

  function emit(line: string): void {
    lineNumber++;
    onLine(line.endsWith('\r') ? line.slice(0, -1) : line, lineNumber);
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

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file (ENOENT)';
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${code})`;
    case 'EISDIR':
      return 'it is a directory (EISDIR)';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
