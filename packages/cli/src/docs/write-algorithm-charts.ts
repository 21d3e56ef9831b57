// `pnpm docs:charts`: regenerates the algorithm charts under docs/algorithms/ (run from
// the repository root). `test/docs-charts.test.ts` fails while the committed files differ.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALGORITHM_CHARTS_DIR, algorithmCharts } from './algorithm-charts';

algorithmCharts().then(
  (charts) => {
    mkdirSync(ALGORITHM_CHARTS_DIR, { recursive: true });
    for (const name of readdirSync(ALGORITHM_CHARTS_DIR)) {
      if (name.endsWith('.svg') && !charts.has(name)) rmSync(join(ALGORITHM_CHARTS_DIR, name));
    }
    for (const [name, svg] of charts) writeFileSync(join(ALGORITHM_CHARTS_DIR, name), svg);
    process.stdout.write(`wrote ${charts.size} charts to ${ALGORITHM_CHARTS_DIR}/\n`);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
