import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALGORITHM_CHARTS_DIR, algorithmCharts } from '../src/docs/algorithm-charts';

const ROOT = join(__dirname, '..', '..', '..');
const STALE = 'stale: run `pnpm docs:charts` and commit docs/algorithms/';

// The README shows these charts; they are generated, so they must be what the code generates now.
describe('the README charts under docs/algorithms', () => {
  let charts: Map<string, string>;
  beforeAll(async () => {
    charts = await algorithmCharts();
  });

  test('one per algorithm, and no other', () => {
    const dir = join(ROOT, ALGORITHM_CHARTS_DIR);
    expect(existsSync(dir)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual([...charts.keys()].sort());
  });

  test('each is what `pnpm docs:charts` generates now', () => {
    for (const [name, svg] of charts) {
      const committed = readFileSync(join(ROOT, ALGORITHM_CHARTS_DIR, name), 'utf8');
      if (committed !== svg) throw new Error(`docs/algorithms/${name} is ${STALE}`);
    }
  });

  test('generation is deterministic', async () => {
    expect(await algorithmCharts()).toEqual(charts);
  });
});
