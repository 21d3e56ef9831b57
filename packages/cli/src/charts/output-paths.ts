import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describeFsError, ReplayInputError } from '../errors';

/** Where the replay's results go, as resolved paths, and the log they must never overwrite. */
export interface OutputPaths {
  /** `--out`: the HTML report. */
  readonly html: string | undefined;
  /** `--svg`: the directory of the charts (created if missing). */
  readonly svgDir: string | undefined;
  /** The log being replayed (`undefined` for standard input or a pattern). */
  readonly log: string | undefined;
}

/**
 * Checks, before the replay runs (a large log takes a while), that `--out` and `--svg` can be
 * written: `--out` is no directory, its directory exists, and neither is the log being replayed;
 * `--svg` is a directory or can be made one. What only writing tells (a full disk, a file such as
 * `/proc/version` that root may open but not write) is still reported by {@link writeCharts}.
 *
 * @throws {@link ReplayInputError} naming the option and the path (the command exits with 2)
 */
export async function checkOutputPaths({ html, svgDir, log }: OutputPaths): Promise<void> {
  const input = await logStats(log);
  if (html !== undefined) {
    const cannot = (why: string) => new ReplayInputError(`--out ${html}: cannot write there: ${why}`);
    const existing = await statOrMissing(html, cannot);
    if (existing === undefined) {
      await creatable(html, { parents: false, cannot });
    } else {
      if (existing.isDirectory()) throw cannot(describeFsError({ code: 'EISDIR' }));
      if (sameFile(existing, input)) throw isTheLog(`--out ${html}: it`, 'report');
      await writable(html, constants.W_OK, cannot);
    }
  }
  if (svgDir !== undefined) {
    const cannot = (why: string) =>
      new ReplayInputError(`--svg ${svgDir}: cannot write charts there: ${why}`);
    const existing = await statOrMissing(svgDir, cannot);
    if (existing === undefined) await creatable(svgDir, { parents: true, cannot });
    else if (!existing.isDirectory()) throw cannot(describeFsError({ code: 'ENOTDIR' }));
    else await writable(svgDir, constants.W_OK | constants.X_OK, cannot);
  }
}

/**
 * Refuses a file about to be written that is the log being replayed (the same file, through a
 * symbolic or hard link too), which the write would destroy.
 *
 * @param subject - what the message names, e.g. `--out report.html: it`
 */
export async function refuseTheLog(
  target: string,
  { log, subject, what }: { log: string | undefined; subject: string; what: 'report' | 'charts' },
): Promise<void> {
  const input = await logStats(log);
  if (input === undefined) return;
  const existing = await stat(target).catch(() => undefined);
  if (existing !== undefined && sameFile(existing, input)) throw isTheLog(subject, what);
}

function isTheLog(subject: string, what: 'report' | 'charts'): ReplayInputError {
  return new ReplayInputError(`${subject} is the log being replayed; write the ${what} elsewhere`);
}

/** A file's identity (device and inode): the same file by any name, link or symbolic link. */
function sameFile(a: Stats, b: Stats | undefined): boolean {
  return b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

async function logStats(log: string | undefined): Promise<Stats | undefined> {
  // A log that cannot be read is reported by the replay itself.
  return log === undefined || log === '-' ? undefined : stat(log).catch(() => undefined);
}

/** The path's stats, or `undefined` when nothing is there yet (or a file is where a directory should be). */
async function statOrMissing(
  path: string,
  cannot: (why: string) => ReplayInputError,
): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw cannot(describeFsError(error));
  }
}

/**
 * A path not there yet can be made: `--out` needs its directory to exist, `--svg` (made with its
 * parents, as `mkdir -p`) needs the nearest existing ancestor to be a directory it may write.
 */
async function creatable(
  path: string,
  { parents, cannot }: { parents: boolean; cannot: (why: string) => ReplayInputError },
): Promise<void> {
  const parent = dirname(path);
  let ancestor = parent;
  let stats = await statOrMissing(ancestor, cannot);
  while (stats === undefined && dirname(ancestor) !== ancestor) {
    ancestor = dirname(ancestor);
    stats = await statOrMissing(ancestor, cannot);
  }
  if (stats !== undefined && !stats.isDirectory()) throw cannot(`${ancestor} is not a directory (ENOTDIR)`);
  if (ancestor !== parent && !parents) throw cannot(`no such directory ${parent} (ENOENT)`);
  await writable(ancestor, constants.W_OK | constants.X_OK, cannot);
}

async function writable(
  path: string,
  mode: number,
  cannot: (why: string) => ReplayInputError,
): Promise<void> {
  try {
    await access(path, mode);
  } catch (error) {
    throw cannot(describeFsError(error));
  }
}
