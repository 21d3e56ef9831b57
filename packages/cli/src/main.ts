import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseCommandLine, type ReplayCommand } from './args/replay-args';
import { USAGE } from './args/usage';
import { checkOutputPaths } from './charts/output-paths';
import { writeCharts } from './charts/write-charts';
import { ReplayInputError } from './errors';
import { replay } from './replay/replay';
import { jsonReport } from './report/json-report';
import { textReport } from './report/text-report';
import { visible } from './report/visible';

/** Where the command writes, and what relative paths are relative to. */
export interface CommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** The directory relative paths (the log, `--out`, `--svg`) are resolved against. */
  readonly cwd: string;
}

/** Exit codes: replayed; nothing could be replayed; a usage error (option, policy, file, format). */
export const EXIT = { ok: 0, nothingReplayed: 1, usage: 2 } as const;

/**
 * Runs `sluice` with its arguments and returns the exit code (it never calls `process.exit`, so
 * tests run it in process).
 *
 * @param argv - the arguments after `sluice`, e.g. `['replay', 'access.log', '--policy', 'gcra 10r/s']`
 * @param io - output streams and working directory
 */
export async function main(argv: readonly string[], io: CommandIo): Promise<number> {
  try {
    const parsed = parseCommandLine(argv);
    if (parsed.kind === 'help') {
      io.stdout(USAGE);
      return EXIT.ok;
    }
    if (parsed.kind === 'version') {
      io.stdout(`${version()}\n`);
      return EXIT.ok;
    }
    return await runReplay(parsed.command, io);
  } catch (error) {
    if (error instanceof ReplayInputError) {
      // The message may quote the log (an unknown format's first line): shown, never run.
      io.stderr(`sluice: ${error.message.split('\n').map(visible).join('\n')}\n`);
      return EXIT.usage;
    }
    throw error;
  }
}

async function runReplay(command: ReplayCommand, io: CommandIo): Promise<number> {
  // `-` is standard input for the log only: `--out -` is a file named `-`.
  const resolveOutput = (path: string): string => (isAbsolute(path) ? path : resolve(io.cwd, path));
  const at = (path: string): string => (path === '-' ? path : resolveOutput(path));
  const { input } = command.replay;
  const log = input.kind === 'log' ? at(input.path) : undefined;
  const outputs = {
    html: command.html === undefined ? undefined : resolveOutput(command.html),
    svgDir: command.svgDir === undefined ? undefined : resolveOutput(command.svgDir),
    log,
  };
  // Before the replay, which may take a while: a bad --out should not cost the whole run.
  await checkOutputPaths(outputs);
  const result = await replay({
    ...command.replay,
    input: input.kind === 'log' && log !== undefined ? { ...input, path: log } : input,
  });
  // Name the log as the user typed it, not its resolved path (a function: `$&` in a file name is
  // no replacement pattern).
  const shown =
    input.kind === 'log' && log !== undefined
      ? { ...result, source: result.source.replace(log, () => input.path) }
      : result;
  io.stdout(command.json ? jsonReport(shown) : textReport(shown));
  if (shown.requests - shown.noKey === 0) {
    io.stderr(
      `sluice: nothing could be replayed: ${
        shown.requests > 0
          ? `every request had an empty key (${input.kind === 'log' ? (input.key ?? '$remote_addr') : 'key'})`
          : shown.unparsed > 0
            ? `none of the ${shown.unparsed} lines could be read as ${shown.format ?? 'a log'}`
            : 'the log is empty'
      }\n`,
    );
    return EXIT.nothingReplayed;
  }
  const written = await writeCharts(shown, { ...outputs, topKeys: command.topKeys });
  for (const path of written) io.stderr(`wrote ${visible(path)}\n`);
  return EXIT.ok;
}

/** The package's version, read from its package.json (one directory above `src/` and `dist/`). */
function version(): string {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}
