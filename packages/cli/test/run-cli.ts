import { join } from 'node:path';
import { main } from '../src/main';

/** The committed logs the tests replay. */
export const FIXTURES = join(__dirname, 'fixtures');

/** What one run of the command printed and returned. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `sluice <argv>` in process (paths relative to the fixtures) and collects its output. */
export async function runCli(argv: readonly string[], cwd = FIXTURES): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    cwd,
  });
  return { code, stdout, stderr };
}
