/**
 * Input the replay cannot use at all — an unreadable file, an unknown log format, an invalid
 * policy or option — as opposed to one bad line, which is counted and skipped. The message is
 * written for the command's user; the command prints it and exits with code 2.
 */
export class ReplayInputError extends Error {
  override readonly name = 'ReplayInputError';
}

/** A file system error, for the command's user: its errno code in words (reading the log or writing a report). */
export function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file (ENOENT)';
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${code})`;
    case 'EISDIR':
      return 'it is a directory (EISDIR)';
    case 'ENOTDIR':
      return 'it is not a directory (ENOTDIR)';
    case 'EROFS':
      return 'read-only file system (EROFS)';
    case 'ENOSPC':
      return 'no space left on the device (ENOSPC)';
    case 'EIO':
      return 'input/output error (EIO)';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
