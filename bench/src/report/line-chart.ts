/** A small SVG line chart for the docs: a few series over one x axis, no dependencies. */

export interface LineSeries {
  readonly name: string;
  readonly colour: string;
  readonly points: ReadonlyArray<readonly [number, number]>;
  /** Dashed, for a reference (the capacity) rather than a measurement. */
  readonly dashed?: boolean;
}

export interface LineChart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly LineSeries[];
  /** x values where a tick is drawn, with their labels. */
  readonly xTicks: ReadonlyArray<readonly [number, string]>;
  /** Maps an x value to its position on [0, 1] (log scales); linear over the ticks by default. */
  readonly xScale?: (x: number) => number;
  /** Vertical marks: [x, label] (a change in the run). */
  readonly marks?: ReadonlyArray<readonly [number, string]>;
  /**
   * Series that lie on one another stay visible: the first drawn widest, each next one thinner
   * on top, and a dot at each point.
   */
  readonly layered?: boolean;
}

const FONT = `font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"`;
const WIDTH = 640;
const PLOT_HEIGHT = 170;
const PAD = { left: 56, right: 16, top: 34, bottom: 44 };
const LEGEND_ROW = 16;

/** A coordinate with at most one decimal: small files, the same text on every machine. */
const c = (value: number): string => String(Math.round(value * 10) / 10);

const escape = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** A round axis top for `max` (1, 2, 2.5 or 5 times a power of ten) and its ticks. */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 2.5, 5, 10].find((f) => f * power >= rough) ?? 10) * power;
  const ticks: number[] = [];
  for (let tick = 0; tick < max + step - 1e-9; tick += step) ticks.push(Math.round(tick * 1e6) / 1e6);
  return ticks;
}

/** One chart as an SVG document, with a legend under it. */
export function lineChart(chart: LineChart): string {
  const xs = chart.xTicks.map(([x]) => x);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const scale = chart.xScale ?? ((x: number) => (x - x0) / (x1 - x0 || 1));
  const yMax = Math.max(...chart.series.flatMap((s) => s.points.map(([, y]) => y)), 0);
  const yTicks = niceTicks(yMax);
  const yTop = yTicks[yTicks.length - 1] as number;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = PLOT_HEIGHT;
  // The legend: one swatch and name per series, in rows under the axis label.
  const legend: Array<{ series: LineSeries; x: number; row: number }> = [];
  let lx = PAD.left;
  let row = 0;
  for (const series of chart.series) {
    const width = 30 + series.name.length * 6.2;
    if (lx + width > WIDTH - PAD.right && lx > PAD.left) {
      lx = PAD.left;
      row++;
    }
    legend.push({ series, x: lx, row });
    lx += width;
  }
  const HEIGHT = PAD.top + plotH + PAD.bottom + (row + 1) * LEGEND_ROW;
  const px = (x: number) => PAD.left + scale(x) * plotW;
  const py = (y: number) => PAD.top + plotH - (Math.min(y, yTop) / yTop) * plotH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="${escape(chart.title)}">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${PAD.left}" y="20" ${FONT} font-size="14" font-weight="600" fill="#222">${escape(chart.title)}</text>`,
  ];
  for (const tick of yTicks) {
    out.push(
      `<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${c(py(tick))}" y2="${c(py(tick))}" stroke="#e5e5e5"/>`,
      `<text x="${PAD.left - 6}" y="${c(py(tick) + 4)}" ${FONT} font-size="11" fill="#555" text-anchor="end">${tick}</text>`,
    );
  }
  for (const [x, label] of chart.xTicks) {
    out.push(
      `<text x="${c(px(x))}" y="${c(PAD.top + plotH + 16)}" ${FONT} font-size="11" fill="#555" text-anchor="middle">${escape(label)}</text>`,
    );
  }
  out.push(
    `<text x="${c(PAD.left + plotW / 2)}" y="${c(PAD.top + plotH + 32)}" ${FONT} font-size="11" fill="#333" text-anchor="middle">${escape(chart.xLabel)}</text>`,
    `<text x="14" y="${c(PAD.top + plotH / 2)}" ${FONT} font-size="11" fill="#333" text-anchor="middle" transform="rotate(-90 14 ${c(PAD.top + plotH / 2)})">${escape(chart.yLabel)}</text>`,
    `<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${c(PAD.top + plotH)}" stroke="#999"/>`,
    `<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${c(PAD.top + plotH)}" y2="${c(PAD.top + plotH)}" stroke="#999"/>`,
  );
  for (const [x, label] of chart.marks ?? []) {
    out.push(
      `<line x1="${c(px(x))}" x2="${c(px(x))}" y1="${PAD.top}" y2="${c(PAD.top + plotH)}" stroke="#888" stroke-dasharray="4 3"/>`,
      `<text x="${c(px(x) + 4)}" y="${PAD.top + 10}" ${FONT} font-size="11" fill="#555">${escape(label)}</text>`,
    );
  }
  const count = chart.series.length;
  chart.series.forEach((series, index) => {
    if (series.points.length === 0) return;
    const width = chart.layered === true ? 2 + 1.5 * (count - 1 - index) : 2;
    const path = series.points.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${c(px(x))} ${c(py(y))}`).join(' ');
    out.push(
      `<path d="${path}" fill="none" stroke="${series.colour}" stroke-width="${c(width)}" stroke-linejoin="round"${series.dashed === true ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    if (chart.layered === true) {
      for (const [x, y] of series.points)
        out.push(
          `<circle cx="${c(px(x))}" cy="${c(py(y))}" r="${c(width / 2 + 1.5)}" fill="${series.colour}"/>`,
        );
    }
  });
  for (const { series, x: lx, row: r } of legend) {
    const ly = PAD.top + plotH + PAD.bottom + r * LEGEND_ROW + 8;
    out.push(
      `<line x1="${c(lx)}" x2="${c(lx + 18)}" y1="${c(ly - 4)}" y2="${c(ly - 4)}" stroke="${series.colour}" stroke-width="2"${series.dashed === true ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${c(lx + 22)}" y="${c(ly)}" ${FONT} font-size="11" fill="#333">${escape(series.name)}</text>`,
    );
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
