// `pnpm docs:bench`: rewrites the figures in the docs (README.md, docs/benchmarks.md, …) from
// bench/results/latest.json, the latest full run, formatted as the repository formats Markdown.
// Run it after `pnpm bench`; bench/test/docs-table.test.ts fails while a document says otherwise.
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { DOC_FILES, docRegions, fillRegions, latestResults } from './docs-table';

async function main(): Promise<void> {
  const root = resolve(__dirname, '../../..');
  const regions = docRegions(await latestResults(root));
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
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
