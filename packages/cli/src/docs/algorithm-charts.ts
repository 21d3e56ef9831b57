import { join } from 'node:path';
import { ALGORITHMS, type AlgorithmName } from '@sluice/core';
import { policySvgFiles } from '../charts/write-charts';
import { replay, type PatternInput } from '../replay/replay';

/**
 * The charts of docs/algorithms.md: the same traffic — the fixed-window edge attack on one key,
 * 100 requests each side of every other 10 s boundary — through each of the six algorithms at
 * 100 per 10 s. It shows at a glance the fixed window letting 200 through in 2 s, and the leaky
 * bucket turning each burst into a steady 10 r/s of delayed requests.
 */
export const ALGORITHM_CHART_TRAFFIC: PatternInput = {
  kind: 'pattern',
  name: 'boundary',
  durationMs: 40_000,
  rps: 10,
  keys: 1,
  windowMs: 10_000,
};

/** Where `pnpm docs:charts` writes them, from the repository root. */
export const ALGORITHM_CHARTS_DIR = join('docs', 'algorithms');

/** The policy each algorithm runs, `'<algorithm> 100/10s'` (its default burst: the whole quota at once). */
export function algorithmPolicy(algorithm: AlgorithmName): string {
  return `${algorithm} 100/10s`;
}

/**
 * Renders the six charts. Deterministic: the pattern has no randomness, and the charts hold no
 * date or duration of the run, so a change in the output means the core decided differently.
 *
 * @returns file name (`gcra.svg`, …) → SVG text
 */
export async function algorithmCharts(): Promise<Map<string, string>> {
  const result = await replay({ input: ALGORITHM_CHART_TRAFFIC, policies: ALGORITHMS.map(algorithmPolicy) });
  const svgs = [...policySvgFiles(result, 0).values()];
  return new Map(ALGORITHMS.map((algorithm, i) => [`${algorithm}.svg`, svgs[i] as string]));
}
