import { machineLine } from '../machine';
import { overloadTables } from '../overload/overload-markdown';
import { CANDIDATES, LOADS, WORKLOADS } from '../overload/scenario';
import type { OverloadResults } from './results';

const x = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
}

/** Goodput (× capacity) of each candidate at each load, and its p99 at 3 and 10 ×, per workload. */
function summary({ overload }: OverloadResults): string[] {
  const lines: string[] = [];
  for (const workload of WORKLOADS) {
    const capacity = overload.capacity[workload];
    lines.push(
      '',
      `${workload === 'backend' ? `A backend of fixed capacity (${capacity} requests/s)` : `A handler that burns the CPU (${capacity} requests/s)`}: goodput × capacity, and p99 of the requests admitted (ms).`,
      '',
      ...table(
        ['candidate', ...LOADS.map((load) => `${load} ×`), 'p99 at 3 ×', 'p99 at 10 ×'],
        CANDIDATES.flatMap((id) => {
          const rows = overload.rows.filter((r) => r.workload === workload && r.candidate === id);
          if (rows.length === 0) return [];
          const at = (load: number) => rows.find((r) => r.load === load);
          const name = id.startsWith('concurrency')
            ? `${rows[0]?.name} (${overload.max[workload][id === 'concurrency-best' ? 'best' : id === 'concurrency-high' ? 'high' : 'low']})`
            : (rows[0]?.name ?? id);
          return [
            [
              name,
              ...LOADS.map((load) => x((at(load)?.goodput ?? Number.NaN) / capacity)),
              x(at(3)?.admittedP99 ?? Number.NaN, 0),
              x(at(10)?.admittedP99 ?? Number.NaN, 0),
            ],
          ];
        }),
      ),
    );
  }
  return lines.slice(1);
}

function goals({ goals: list }: OverloadResults): string[] {
  return table(
    ['goal', 'measured', 'target', ''],
    list.map((g) => [
      g.goal,
      g.measured,
      g.target,
      g.met === null ? 'not measured' : g.met ? 'met' : 'not met',
    ]),
  );
}

/** The regions of docs/overload.md and docs/benchmarks.md that come from `bench/results/overload.json`. */
export function overloadRegions(results: OverloadResults): Readonly<Record<string, readonly string[]>> {
  const minutes = Math.floor(results.durationSeconds / 60);
  const seconds = Math.round(results.durationSeconds % 60);
  return {
    'overload-run': [
      `Latest run of the overload section: ${machineLine(results.machine)}; ${results.date.slice(0, 10)}, ${minutes} min ${seconds} s.`,
    ],
    'overload-summary': summary(results),
    'overload-goals': goals(results),
    'overload-tables': overloadTables(results.overload),
  };
}
