// Packs every published package (packages/* not marked private) into one folder, as
// `pnpm publish` would pack it (`workspace:^` becomes a version range), and prints how to install
// the tarballs with npm in another project. Run through `pnpm pack:all`, which builds first.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(root, 'packed'));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const pnpm = process.env.npm_execpath;
const tarballs = [];
for (const folder of readdirSync(join(root, 'packages'))) {
  const dir = join(root, 'packages', folder);
  if (!existsSync(join(dir, 'package.json'))) continue;
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (manifest.private) continue;
  const [cmd, args] = pnpm ? [process.execPath, [pnpm]] : ['npx', ['--yes', 'pnpm@10.34.8']];
  const printed = execFileSync(cmd, [...args, 'pack', '--pack-destination', out], {
    cwd: dir,
    encoding: 'utf8',
  });
  tarballs.push(printed.trim().split('\n').pop());
}
const shown = tarballs.map((file) => relative(process.cwd(), file) || file);
console.log(`packed ${tarballs.length} packages into ${out}:`);
for (const file of shown) console.log(`  ${file}`);
console.log('\nin your project, install the ones you use (with @sluice/core), e.g.:');
const core = tarballs.find((f) => /sluice-core-/.test(f));
const express = tarballs.find((f) => /sluice-express-/.test(f));
console.log(`  npm i ${core} ${express} express`);
const hono = tarballs.find((f) => /sluice-hono-/.test(f));
if (hono) console.log(`  npm i ${core} ${hono} hono @hono/node-server`);
