import type { PolicyResult, ReplayResult } from '../replay/replay';
import { thousands } from '../report/format';
import { chartFrame, outcomeChart, peakRate, type ChartFrame } from './outcome-chart';
import { clip, escapeXml, FONT, OUTCOME_COLOURS } from './svg';

const WIDTH = 640;
const MAIN_HEIGHT = 170;
const KEY_HEIGHT = 52;

/** The frame and y-axis tops every chart of one replay shares, so its charts compare at a glance. */
export interface SharedScales {
  readonly frame: ChartFrame;
  /** Highest requests per second of any policy's chart. */
  readonly peak: number;
  /** Per hottest key (same order as `result.hotKeys`), its highest rate under any policy. */
  readonly keyPeaks: readonly number[];
}

/**
 * The common scales of a replay's charts: one time axis for all, one y axis for the policies'
 * charts, one per hottest key.
 *
 * @returns `undefined` when nothing was replayed
 */
export function sharedScales(result: ReplayResult, topKeys: number): SharedScales | undefined {
  const hot = result.hotKeys.slice(0, topKeys);
  const frame = chartFrame(
    [...result.policies.map((policy) => policy.series), ...hot.flatMap((key) => key.series)],
    result.format === undefined,
  );
  if (frame === undefined) return undefined;
  return {
    frame,
    peak: peakRate(
      result.policies.map((policy) => policy.series),
      frame,
    ),
    keyPeaks: hot.map((key) => peakRate(key.series, frame)),
  };
}

/** The policy's sustained rate for one key in requests per second (the lowest of several rates). */
export function sustainedRate(policy: PolicyResult): number {
  return Math.min(...policy.policies.map(({ limit, windowMs }) => (limit * 1000) / windowMs));
}

/**
 * One policy's chart as a standalone SVG document (`--svg`): its totals, requests per second over
 * time by outcome, and the same for each of the `topKeys` hottest keys.
 *
 * @param result - the replay
 * @param index - which policy of `result.policies`
 * @param scales - from {@link sharedScales}, so the files of one replay share their axes
 * @param topKeys - hottest keys charted one by one (none when the replay had a single key)
 */
export function policySvg(
  result: ReplayResult,
  index: number,
  scales: SharedScales,
  topKeys: number,
): string {
  const policy = result.policies[index] as PolicyResult;
  const keys = result.hotKeys.length > 1 ? result.hotKeys.slice(0, topKeys) : [];
  const singleKey = result.hotKeys.length === 1;
  const rate = sustainedRate(policy);
  const parts: string[] = [];
  const decided = policy.admitted + policy.delayed + policy.limited;
  parts.push(
    `<text x="12" y="20" font-size="14" font-weight="600" fill="#222">${escapeXml(clip(policy.label, 60))}</text>`,
    `<text x="12" y="37" font-size="11" fill="#555">${thousands(decided)} requests: ${thousands(policy.admitted)} admitted, ${thousands(policy.delayed)} delayed, ${thousands(policy.limited)} limited</text>`,
    legend(12, 56, singleKey || keys.length > 0),
    outcomeChart({
      series: policy.series,
      frame: scales.frame,
      peak: scales.peak,
      x: 0,
      y: 64,
      width: WIDTH,
      height: MAIN_HEIGHT,
      ...(singleKey ? { rateLine: rate } : {}),
    }),
  );
  let y = 64 + MAIN_HEIGHT + 8;
  if (keys.length > 0) {
    parts.push(`<text x="12" y="${y + 12}" font-size="12" font-weight="600" fill="#222">Hottest keys</text>`);
    y += 18;
    keys.forEach((key, k) => {
      parts.push(
        `<text x="12" y="${y + 11}" font-size="11" fill="#333">${escapeXml(clip(key.key, 70))} <tspan fill="#777">${key.error > 0 ? '≤ ' : ''}${thousands(key.requests)} requests</tspan></text>`,
        outcomeChart({
          series: key.series[index] as PolicyResult['series'],
          frame: scales.frame,
          peak: scales.keyPeaks[k] ?? 0,
          x: 0,
          y: y + 14,
          width: WIDTH,
          height: KEY_HEIGHT,
          rateLine: rate,
          compact: true,
        }),
      );
      y += 14 + KEY_HEIGHT + 6;
    });
  }
  const height = y + 4;
  const title = `${policy.label}: requests per second, admitted, delayed and limited`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escapeXml(title)}" ${FONT}>`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/** The colour key, from (`left`, `y`). */
function legend(left: number, y: number, withRate: boolean): string {
  const items: Array<[string, string]> = [
    ['admitted', OUTCOME_COLOURS[0]],
    ['delayed (drawn when let through)', OUTCOME_COLOURS[1]],
    ['limited', OUTCOME_COLOURS[2]],
  ];
  // Label widths at 10 px, so items follow each other without measuring text.
  const widths = [46, 172, 36];
  let x = left;
  const parts: string[] = [];
  items.forEach(([label, colour], i) => {
    parts.push(
      `<rect x="${x}" y="${y - 8}" width="10" height="10" fill="${colour}"/>`,
      `<text x="${x + 14}" y="${y + 1}">${label}</text>`,
    );
    x += (widths[i] as number) + 24;
  });
  if (withRate) {
    parts.push(
      `<line x1="${x}" x2="${x + 14}" y1="${y - 3}" y2="${y - 3}" stroke="#333" stroke-dasharray="4 3"/>`,
      `<text x="${x + 18}" y="${y + 1}">sustained rate of one key</text>`,
    );
  }
  return `<g font-size="10" fill="#555">${parts.join('')}</g>`;
}
