import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from './run-cli';

describe('sluice --help and --version', () => {
  test('help lists the command, the patterns and the exit codes', async () => {
    for (const argv of [['--help'], ['replay', '-h'], []]) {
      const run = await runCli(argv);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('sluice replay <log> --policy <policy>');
      expect(run.stdout).toContain('--pattern <steady|burst|boundary|flash-sale>');
      expect(run.stdout).toContain('Exit code: 0 when requests were replayed');
    }
  });

  test('version is the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect((await runCli(['--version'])).stdout).toBe(`${version}\n`);
  });

  test('an unknown command', async () => {
    const run = await runCli(['replya', 'access.log']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('sluice: unknown command "replya"; the command is: sluice replay\n');
  });
});
