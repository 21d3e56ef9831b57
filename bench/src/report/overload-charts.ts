import type { OverloadResult } from '../overload/overload';
import { CANDIDATE_NAMES, CANDIDATES, LOADS, SLOTS, WORKLOADS, type CandidateId } from '../overload/scenario';
import { lineChart, type LineSeries } from './line-chart';

/** Where `pnpm docs:bench` writes the overload charts, from the repository root. */
export const OVERLOAD_CHARTS_DIR = 'docs/overload';

const COLOURS: Record<CandidateId, string> = {
  none: '#888888',
  'concurrency-best': '#3b75c4',
  'concurrency-high': '#8fb4e3',
  'concurrency-low': '#1f3f73',
  'under-pressure': '#e3a33b',
  adaptive: '#4c9a5f',
};

/** The adaptive limit over the two settling runs, with the backend's slots for reference. */
function limitChart(overload: OverloadResult): string | undefined {
  const settle = overload.settle;
  if (settle.length === 0) return undefined;
  const [step, halving] = settle;
  const seconds = (samples: ReadonlyArray<readonly [number, number]>) =>
    samples.map(([ms, limit]) => [ms / 1000, limit] as const);
  const end = Math.max(...settle.flatMap((run) => run.samples.map(([ms]) => ms / 1000)));
  const at = (halving ?? step)?.atMs ?? 0;
  const ticks: Array<[number, string]> = [];
  for (let s = 0; s <= Math.ceil(end); s++) ticks.push([s, `${s} s`]);
  const series: LineSeries[] = [
    ...(step === undefined ? [] : [{ name: step.what, colour: '#4c9a5f', points: seconds(step.samples) }]),
    ...(halving === undefined
      ? []
      : [{ name: halving.what, colour: '#d2504f', points: seconds(halving.samples) }]),
    {
      name: 'backend slots (halved in the second run)',
      colour: '#999999',
      dashed: true,
      points: [
        [0, SLOTS],
        [at / 1000, SLOTS],
        [at / 1000, SLOTS / 2],
        [Math.ceil(end), SLOTS / 2],
      ],
    },
  ];
  return lineChart({
    title: 'sluice adaptiveLimit: the limit after a change at 3 s (backend workload)',
    xLabel: 'time',
    yLabel: 'limit (requests in flight)',
    series,
    xTicks: ticks,
    marks: [[at / 1000, 'change']],
  });
}

/** Goodput against offered load, every candidate, one workload (log scale of load). */
function goodputChart(overload: OverloadResult, workload: (typeof WORKLOADS)[number]): string {
  const capacity = overload.capacity[workload];
  const series: LineSeries[] = CANDIDATES.flatMap((id) => {
    const rows = overload.rows.filter((r) => r.workload === workload && r.candidate === id);
    if (rows.length === 0) return [];
    return [
      {
        name: CANDIDATE_NAMES[id],
        colour: COLOURS[id],
        points: rows.map((r) => [r.load, r.goodput / capacity] as const),
      },
    ];
  });
  const [low, high] = [Math.log10(LOADS[0]), Math.log10(LOADS[LOADS.length - 1] as number)];
  return lineChart({
    title: `Goodput against offered load: ${workload === 'backend' ? `a backend of ${capacity} requests/s` : `a handler burning the CPU (${capacity} requests/s)`}`,
    xLabel: 'offered load (× capacity, log scale)',
    yLabel: 'goodput (× capacity)',
    series,
    xTicks: LOADS.map((load) => [load, `${load} ×`] as const),
    xScale: (x) => (Math.log10(x) - low) / (high - low),
    layered: true,
  });
}

/** Every chart of docs/overload.md: file name → SVG text, drawn from the section's results only. */
export function overloadCharts(overload: OverloadResult): Map<string, string> {
  const charts = new Map<string, string>();
  const limit = limitChart(overload);
  if (limit !== undefined) charts.set('adaptive-limit.svg', limit);
  for (const workload of WORKLOADS) charts.set(`goodput-${workload}.svg`, goodputChart(overload, workload));
  return charts;
}
