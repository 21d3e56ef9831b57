/**
 * Input the replay cannot use at all — an unreadable file, an unknown log format, an invalid
 * policy or option — as opposed to one bad line, which is counted and skipped. The message is
 * written for the command's user; the command prints it and exits with code 2.
 */
export class ReplayInputError extends Error {
  override readonly name = 'ReplayInputError';
}
