import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository's root. */
export const ROOT = resolve(__dirname, '../../../..');

/** The packages users install (every workspace package under packages/ that is not private). */
export const PUBLISHED: ReadonlyArray<{ readonly name: string; readonly dir: string }> = readdirSync(
  join(ROOT, 'packages'),
)
  .map((folder) => join(ROOT, 'packages', folder))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ manifest }) => manifest.private !== true)
  .map(({ dir, manifest }) => ({ name: manifest.name as string, dir }));

/** Runs a command; its output, or an error carrying what it printed. */
export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  try {
    return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`);
  }
}

/** pnpm as the test was started with (`pnpm test`), else the pinned one through npx. */
function pnpm(args: string[], cwd: string): string {
  const execPath = process.env.npm_execpath;
  return execPath !== undefined && /pnpm/.test(execPath)
    ? run(process.execPath, [execPath, ...args], cwd)
    : run('npx', ['--yes', 'pnpm@10.34.8', ...args], cwd);
}

/** A folder outside the repository where npm installed the packed packages, and what it holds. */
export interface PackedProject {
  readonly dir: string;
  /** The tarball of each package, by name. */
  readonly tarballs: Readonly<Record<string, string>>;
  remove(): void;
}

/**
 * Packs every published package as `pnpm publish` would (`pnpm pack`: `workspace:^` becomes a
 * version range), then installs the tarballs with plain `npm install` in a new folder outside the
 * repository, next to `dependencies` from the registry (the frameworks, as a user has them).
 * Needs the packages built (`pnpm test` builds first).
 *
 * @param dependencies - other packages to install beside them, name to version range
 */
export function installPacked(dependencies: Record<string, string>): PackedProject {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-packed-'));
  const store = join(dir, 'tarballs');
  mkdirSync(store);
  const tarballs: Record<string, string> = {};
  for (const { name, dir: packageDir } of PUBLISHED) {
    if (!existsSync(join(packageDir, 'dist')))
      throw new Error(`${name} is not built: run \`pnpm build\` (pnpm test does)`);
    const out = pnpm(['pack', '--pack-destination', store], packageDir).trim().split('\n');
    tarballs[name] = out[out.length - 1] as string;
  }
  const local = Object.fromEntries(Object.entries(tarballs).map(([name, file]) => [name, `file:${file}`]));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, dependencies: { ...local, ...dependencies } }, null, 2),
  );
  // Plain npm, as a user: `workspace:` ranges left in a tarball would fail here.
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], dir);
  return { dir, tarballs, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
