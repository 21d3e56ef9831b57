import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Results } from '../src/report/results';
import {
  DOC_FILES,
  docRegions,
  fillRegions,
  latestOverload,
  latestResults,
  staleRegions,
} from '../src/report/docs-table';
import { OVERLOAD_CHARTS_DIR, overloadCharts } from '../src/report/overload-charts';
import type { OverloadResults } from '../src/report/results';

const ROOT = join(__dirname, '../..');

// The figures in the docs are generated from bench/results/latest.json: a document that differs
// from what `pnpm docs:bench` writes is stale (or was edited by hand inside a region).
describe('docs figures from the latest full bench run', () => {
  let results: Results;
  let overload: OverloadResults;
  beforeAll(async () => {
    results = await latestResults(ROOT);
    overload = await latestOverload(ROOT);
  });

  test.each(DOC_FILES)('%s says what latest.json says (else: pnpm docs:bench)', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    expect(text).toMatch(/^<!-- bench:[a-z-]+ -->$/m);
    expect(staleRegions(text, results, file, overload)).toEqual([]);
  });

  test('the overload charts are drawn from bench/results/overload.json (else: pnpm docs:bench)', () => {
    const charts = overloadCharts(overload.overload);
    expect(charts.size).toBeGreaterThanOrEqual(2);
    for (const [name, svg] of charts) {
      expect(readFileSync(join(ROOT, OVERLOAD_CHARTS_DIR, name), 'utf8')).toBe(svg);
    }
  });

  test('a region edited by hand is stale; its formatting alone is not', () => {
    const text = readFileSync(join(ROOT, 'docs/benchmarks.md'), 'utf8');
    // The first sluice ratio of the peers table (Express, in memory, admitted), edited by hand.
    const edited = text.replace(
      /(\| Express requests\/s × bare, in memory, admitted \| )\d\.\d{3}/,
      '$10.001',
    );
    expect(edited).not.toBe(text);
    expect(staleRegions(edited, results, 'x.md', overload)).toEqual(['peers']);
    expect(staleRegions(text.replace(/ +\|/g, ' |'), results, 'x.md', overload)).toEqual([]);
  });

  test('a figure that changes in the results changes the docs', () => {
    const before = docRegions(results).batching?.join('\n');
    const redis = results.redis;
    if (redis === undefined) throw new Error('latest.json has no redis section');
    const changed: Results = {
      ...results,
      redis: { ...redis, rows: redis.rows.map((row) => ({ ...row, perSecond: row.perSecond + 1000 })) },
    };
    expect(docRegions(changed).batching?.join('\n')).not.toBe(before);
  });

  test('the generic tables leave the overload section to its own region', () => {
    const withOverload: Results = { ...results, overload: overload.overload };
    const tables = docRegions(withOverload, overload).tables?.join('\n') ?? '';
    expect(tables).not.toMatch(/Overload/);
    expect(tables).toBe(docRegions({ ...results, overload: undefined }, overload).tables?.join('\n'));
  });

  test('an unknown, mismatched or unclosed region is an error, not a silent pass', () => {
    const regions = { run: ['x'] };
    expect(fillRegions('<!-- bench:run -->\nold\n<!-- /bench:run -->', regions, 'a.md')).toBe(
      '<!-- bench:run -->\n\nx\n\n<!-- /bench:run -->',
    );
    expect(() => fillRegions('<!-- bench:nope -->\n<!-- /bench:nope -->', regions, 'a.md')).toThrow(
      /unknown region bench:nope/,
    );
    expect(() => fillRegions('<!-- bench:run -->\n<!-- /bench:peers -->', regions, 'a.md')).toThrow(
      /closed by/,
    );
    expect(() => fillRegions('<!-- bench:run -->\nold\n', regions, 'a.md')).toThrow(/not closed/);
  });
});
