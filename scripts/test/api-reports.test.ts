import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The committed API reports (`packages/<p>/etc/*.api.md`) are those of the built declarations: a
 * change of a public name fails here until `pnpm api:update` rewrites the report, so it shows up
 * in review. Needs the packages built (`pnpm test` builds first; the script says so otherwise).
 */
const ROOT = resolve(__dirname, '../..');
const reports = (...args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, 'scripts/api-reports.mjs'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });

test('every published entry point matches its committed API report', () => {
  const run = reports();
  // The script's own words say what changed and how to update: they are the failure message.
  if (run.status !== 0) throw new Error(`${run.stderr}${run.stdout}`);
  expect(run.stdout).toMatch(/^\d+ API reports up to date/);
});

test('a report that misses a public name fails, with the diff and the command that updates it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-stale-report-'));
  try {
    cpSync(join(ROOT, 'packages/express/etc'), join(dir, 'express'), { recursive: true });
    const file = join(dir, 'express/express.api.md');
    const report = readFileSync(file, 'utf8');
    const declaration = /^export function rateLimit\(.*$/m.exec(report)?.[0] as string;
    expect(declaration).toBeDefined();
    writeFileSync(file, report.replace(`${declaration}\n`, ''));

    const run = reports('--only', '@sluice/express', '--reports', dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('express.api.md is stale');
    expect(run.stderr).toContain(`+${declaration}`);
    expect(run.stderr).toContain('run `pnpm api:update`');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
