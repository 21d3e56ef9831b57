import { bucketWidthAt, OUTCOMES, type Series } from '../replay/series';
import { niceAxis, timeLabel, timeStep } from './scale';
import { coordinate, FONT, OUTCOME_COLOURS } from './svg';

/** The time axis every chart of one report shares, so charts side by side line up. */
export interface ChartFrame {
  /** Start of the first bucket, epoch ms (a multiple of `widthMs`). */
  readonly fromMs: number;
  /** Bucket width, ms. */
  readonly widthMs: number;
  readonly buckets: number;
  /** Where time labels count from (the first request). */
  readonly startMs: number;
  /** Label times from the start (generated traffic) rather than by the UTC clock (a log). */
  readonly relative: boolean;
}

/** Buckets across a chart at most: about 1.5 pixels each on a 640-pixel chart. */
const MAX_BUCKETS_SHOWN = 400;

/**
 * The common frame of `series`: their whole span, in the narrowest bucket width they all have
 * that fits in {@link MAX_BUCKETS_SHOWN} buckets.
 *
 * @returns `undefined` when no series holds a request
 */
export function chartFrame(series: readonly Series[], relative: boolean): ChartFrame | undefined {
  const held = series.filter((s) => s.startMs !== undefined);
  if (held.length === 0) return undefined;
  const startMs = Math.min(...held.map((s) => s.startMs as number));
  const endMs = Math.max(...held.map((s) => s.endMs as number));
  const narrowest = Math.max(...held.map((s) => s.widthMs));
  let level = 0;
  while (bucketWidthAt(level) < narrowest) level++;
  for (;;) {
    const widthMs = bucketWidthAt(level);
    const fromMs = Math.floor(startMs / widthMs) * widthMs;
    const buckets = Math.max(1, Math.ceil((endMs - fromMs) / widthMs));
    if (buckets <= MAX_BUCKETS_SHOWN) return { fromMs, widthMs, buckets, startMs, relative };
    level++;
  }
}

/** Each outcome's requests per second in each bucket of `frame`. */
export function outcomeRates(series: Series, frame: ChartFrame): Float64Array[] {
  const perSecond = 1000 / frame.widthMs;
  return OUTCOMES.map((_, outcome) =>
    series.values(outcome, frame.widthMs, frame.fromMs, frame.buckets).map((count) => count * perSecond),
  );
}

/** The highest total requests per second of any bucket of `series` (the y-axis top they need). */
export function peakRate(series: readonly Series[], frame: ChartFrame): number {
  let peak = 0;
  for (const one of series) {
    const rates = outcomeRates(one, frame);
    for (let i = 0; i < frame.buckets; i++) {
      const total = rates.reduce((sum, values) => sum + (values[i] as number), 0);
      if (total > peak) peak = total;
    }
  }
  return peak;
}

/** Where and how to draw one chart. */
export interface OutcomeChartOptions {
  readonly series: Series;
  readonly frame: ChartFrame;
  /** The top of the y axis in requests per second, shared by the charts compared. */
  readonly peak: number;
  /** The box of the whole chart (axes included), in the SVG's units. */
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  /** A dashed line at this many requests per second: the policy's sustained rate for one key. */
  readonly rateLine?: number;
  /** Fewer ticks and no time labels, for the small per-key charts. */
  readonly compact?: boolean;
}

const LEFT = 44;
const BOTTOM = 18;

/**
 * Requests per second over time as stacked steps: admitted at the bottom, delayed above (each
 * drawn when it is let through, so the leaky bucket's smoothing shows), limited on top.
 *
 * @returns an SVG `<g>` element
 */
export function outcomeChart(options: OutcomeChartOptions): string {
  const { frame, compact = false } = options;
  const plot = {
    x: options.x + LEFT,
    y: options.y + 4,
    width: options.width - LEFT - 8,
    height: options.height - 4 - (compact ? 4 : BOTTOM),
  };
  const axis = niceAxis(Math.max(options.peak, options.rateLine ?? 0), compact ? 2 : 4);
  const xAt = (bucket: number): number => plot.x + (bucket / frame.buckets) * plot.width;
  const yAt = (rate: number): number => plot.y + plot.height - (rate / axis.top) * plot.height;
  const parts: string[] = [];

  for (const tick of axis.ticks) {
    const y = coordinate(yAt(tick));
    parts.push(
      `<line x1="${coordinate(plot.x)}" x2="${coordinate(plot.x + plot.width)}" y1="${y}" y2="${y}" stroke="#e4e4e4"/>`,
      `<text x="${coordinate(plot.x - 4)}" y="${y}" dy="0.32em" text-anchor="end">${formatRate(tick)}</text>`,
    );
  }
  const rates = outcomeRates(options.series, frame);
  const below = new Float64Array(frame.buckets);
  rates.forEach((values, outcome) => {
    const above = below.map((base, i) => base + (values[i] as number));
    if (values.some((value) => value > 0)) {
      parts.push(`<path d="${stepArea(below, above, xAt, yAt)}" fill="${OUTCOME_COLOURS[outcome]}"/>`);
    }
    below.set(above);
  });
  if (options.rateLine !== undefined) {
    const y = coordinate(yAt(options.rateLine));
    parts.push(
      `<line x1="${coordinate(plot.x)}" x2="${coordinate(plot.x + plot.width)}" y1="${y}" y2="${y}" stroke="#333" stroke-dasharray="4 3"/>`,
    );
  }
  parts.push(
    `<line x1="${coordinate(plot.x)}" x2="${coordinate(plot.x + plot.width)}" y1="${coordinate(plot.y + plot.height)}" y2="${coordinate(plot.y + plot.height)}" stroke="#999"/>`,
  );
  if (!compact) parts.push(...timeTicks(frame, plot, xAt));
  return `<g ${FONT} font-size="10" fill="#555">${parts.join('')}</g>`;
}

function timeTicks(
  frame: ChartFrame,
  plot: { y: number; height: number },
  xAt: (bucket: number) => number,
): string[] {
  const endMs = frame.fromMs + frame.buckets * frame.widthMs;
  const step = timeStep(endMs - frame.startMs);
  const origin = frame.relative ? frame.startMs : 0;
  const first = origin + Math.ceil((frame.startMs - origin) / step) * step;
  const ticks: string[] = [];
  for (let ms = first; ms <= endMs; ms += step) {
    const x = coordinate(xAt((ms - frame.fromMs) / frame.widthMs));
    const y = plot.y + plot.height;
    ticks.push(
      `<line x1="${x}" x2="${x}" y1="${coordinate(y)}" y2="${coordinate(y + 3)}" stroke="#999"/>`,
      `<text x="${x}" y="${coordinate(y + 13)}" text-anchor="middle">${timeLabel(ms, step, frame.startMs, frame.relative)}</text>`,
    );
  }
  return ticks;
}

/**
 * The outline of a stacked layer as steps: its top edge forwards, its bottom edge backwards,
 * a corner only where the value changes (flat stretches cost nothing).
 */
function stepArea(
  bottom: Float64Array,
  top: Float64Array,
  xAt: (bucket: number) => number,
  yAt: (rate: number) => number,
): string {
  const n = top.length;
  const path: string[] = [`M${coordinate(xAt(0))} ${coordinate(yAt(top[0] as number))}`];
  for (let i = 1; i < n; i++) {
    if (top[i] !== top[i - 1]) path.push(`H${coordinate(xAt(i))}V${coordinate(yAt(top[i] as number))}`);
  }
  path.push(`H${coordinate(xAt(n))}V${coordinate(yAt(bottom[n - 1] as number))}`);
  for (let i = n - 1; i > 0; i--) {
    if (bottom[i - 1] !== bottom[i])
      path.push(`H${coordinate(xAt(i))}V${coordinate(yAt(bottom[i - 1] as number))}`);
  }
  path.push(`H${coordinate(xAt(0))}Z`);
  return path.join('');
}

/** An axis label in requests per second: `1.5`, `250`, `12k`. */
function formatRate(rate: number): string {
  if (rate >= 10_000) return `${coordinate(rate / 1000)}k`;
  return coordinate(rate);
}
