// `pnpm docs:bench`: rewrites the figures in the docs (README.md, docs/benchmarks.md, …) from
// bench/results/latest.json, the latest full run, formatted as the repository formats Markdown,
// and the overload guide's figures and charts (docs/overload/*.svg) from bench/results/overload.json.
// Run it after `pnpm bench`; bench/test/docs-table.test.ts fails while a document says otherwise.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { DOC_FILES, docRegions, fillRegions, latestOverload, latestResults } from './docs-table';
import { OVERLOAD_CHARTS_DIR, overloadCharts } from './overload-charts';

async function main(): Promise<void> {
  const root = resolve(__dirname, '../../..');
  const overload = await latestOverload(root);
  const regions = docRegions(await latestResults(root), overload);
  for (const file of DOC_FILES) {
    const path = join(root, file);
    const text = await readFile(path, 'utf8');
    const next = await format(fillRegions(text, regions, file), {
      ...(await resolveConfig(path)),
      filepath: path,
    });
    if (next === text) continue;
    await writeFile(path, next);
    console.log(`wrote ${file}`);
  }
  // The overload guide's charts, from the overload section's own results.
  const charts = overloadCharts(overload.overload);
  const dir = join(root, OVERLOAD_CHARTS_DIR);
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(dir)) {
    if (name.endsWith('.svg') && !charts.has(name)) await rm(join(dir, name));
  }
  for (const [name, svg] of charts) {
    const path = join(dir, name);
    const before = await readFile(path, 'utf8').catch(() => undefined);
    if (before === svg) continue;
    await writeFile(path, svg);
    console.log(`wrote ${join(OVERLOAD_CHARTS_DIR, name)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
