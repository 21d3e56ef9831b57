#!/usr/bin/env node
import { main } from './main';

// `pnpm sluice …` runs from the repository root; paths the user typed are relative to where they
// ran it, which pnpm passes as INIT_CWD (only trusted for the root script itself).
const fromRootScript =
  process.env.npm_lifecycle_event === 'sluice' && process.env.npm_package_name === 'sluice-monorepo';
const cwd = fromRootScript && process.env.INIT_CWD ? process.env.INIT_CWD : process.cwd();

main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `sluice: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 70;
  },
);
